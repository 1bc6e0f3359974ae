package benchmarks

import (
	"context"
	"io"
)

// Run measures the ceilings and every figure of the suite and writes the
// results to stdout: a table, or with o.JSON the Results document as
// JSON. With o.Report it also writes report.md, chart.svg and chart.png into that
// directory. Progress lines go to o.Progress. A figure that cannot be
// measured is reported as not measured; Run fails only when the suite
// itself cannot run (no room for its files, a ceiling that fails, ctx
// cancelled).
func Run(ctx context.Context, o Options, stdout io.Writer) error {
	res, err := Measure(ctx, o)
	if err != nil {
		return err
	}
	if o.Report != "" {
		if err := writeReport(o.Report, res); err != nil {
			return err
		}
		o.resolveProgress("report written to %s", o.Report)
	}
	if o.JSON {
		return res.WriteJSON(stdout)
	}
	return res.WriteTable(stdout)
}

// Measure runs the suite and returns its results without printing them.
func Measure(ctx context.Context, o Options) (*Results, error) {
	r, err := o.resolve()
	if err != nil {
		return nil, err
	}
	return measure(ctx, r)
}

func (o Options) resolveProgress(format string, args ...any) {
	(&resolved{Options: o}).progress(format, args...)
}
