package benchmarks

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"text/tabwriter"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"

	"github.com/mmapkit/mmapkit/layout"
)

// title names a record with its type, shape and size.
func (r *RecordResult) title() string {
	return fmt.Sprintf("%s (%s%s, %s)", r.Name, r.Type, layout.ShapeString(r.Shape), HumanSize(r.Bytes))
}

// wayName is how a figure's way reads in a sentence.
func (f *FileFigure) wayName() string {
	switch f.Way {
	case WayPeer:
		return f.Ceiling
	case WayAdvised:
		return "a mapping advised sequential"
	}
	return "the " + f.Way
}

func (f *FileFigure) temp() string {
	if f.Cold {
		return "cold"
	}
	return "warm"
}

// valueText prints a value in its unit, or "-" for none.
func valueText(x float64, u Unit) string {
	if x <= 0 {
		return "-"
	}
	return fmtNum(&x) + " " + unitLabel(u)
}

// advice is the record's closing line: the fastest way to read it warm
// and its lead over the next fastest and over the user's own tool; then
// the same from disk (cold), with what the cold figures say to do.
func advice(r *RecordResult) string {
	head := filepath.Base(r.File) + ": " + r.title() + ": "
	line := head + fastest(r, false)
	best, next := bestTwo(r, false)
	for i := range r.Figures {
		// The user's own tool, when it is not already named.
		if f := &r.Figures[i]; f.Way == WayPeer && !f.Cold && f.Value > 0 && f != best && f != next {
			line += fmt.Sprintf(", %.1fx %s", best.Value/f.Value, f.wayName())
		}
	}
	return line + "; cold, " + coldAdvice(r)
}

// bestTwo returns the fastest and the next fastest of the record's
// measured GB/s figures, warm or cold.
func bestTwo(r *RecordResult, cold bool) (best, next *FileFigure) {
	for i := range r.Figures {
		f := &r.Figures[i]
		if f.Cold != cold || f.Unit != GBps || f.Value <= 0 {
			continue
		}
		switch {
		case best == nil || f.Value > best.Value:
			best, next = f, best
		case next == nil || f.Value > next.Value:
			next = f
		}
	}
	return best, next
}

// fastest names the fastest way, warm or cold, and its lead.
func fastest(r *RecordResult, cold bool) string {
	best, next := bestTwo(r, cold)
	switch {
	case best == nil:
		why := ""
		for _, f := range r.Figures {
			if f.Cold == cold && strings.HasPrefix(f.Note, "not measured: ") {
				why = " (" + strings.TrimPrefix(f.Note, "not measured: ") + ")"
				break
			}
		}
		return "no way to read it could be measured here" + why
	case next == nil:
		return fmt.Sprintf("%s is the only way measured, %s", best.wayName(), valueText(best.Value, GBps))
	}
	return fmt.Sprintf("%s is fastest, %s, %.1fx %s", best.wayName(), valueText(best.Value, GBps), best.Value/next.Value, next.wayName())
}

// coldTooSlow is the share of read(2)'s rate under which a view scan
// from disk is worth advice.
const coldTooSlow = 0.8

// coldAdvice is the cold half of the advice: the fastest way from disk,
// then what to do where the measurements say a view loses to read(2):
// a scan that the kernel's read-ahead does not keep fed (sequential
// advice, where the advised scan shows it helps; else read(2) or a
// pre-fault), or lookups that read a window around every element
// (random advice).
func coldAdvice(r *RecordResult) string {
	find := func(way string) *FileFigure {
		for i := range r.Figures {
			if f := &r.Figures[i]; f.Cold && f.Way == way && f.Value > 0 {
				return f
			}
		}
		return nil
	}
	line := fastest(r, true)
	view, adv, rnd := find(WayView), find(WayAdvised), find(WayRandom)
	// read(2) of the same bytes from disk: the best of the copying read's
	// ceiling and the advised scan's.
	read := 0.0
	for _, f := range r.Figures {
		if f.Cold && f.Ceiling == "read(2)" && (f.Way == WayCopy || f.Way == WayAdvised) {
			read = max(read, f.CeilingValue)
		}
	}
	if view != nil && read > 0 {
		share := view.Value / read
		switch {
		case share >= coldTooSlow:
			line += fmt.Sprintf("; the view scan keeps up with read(2) from disk (%.2f of it)", share)
		case adv != nil && adv.Value > 1.1*view.Value:
			line += fmt.Sprintf("; the view scan gets %.2f of read(2)'s %s from disk, a mapping advised sequential %.2f: open it with mmapfile.AdviceSequential for scans", share, valueText(read, GBps), adv.Value/read)
		default:
			line += fmt.Sprintf("; the view scan gets %.2f of read(2)'s %s from disk, and sequential advice does not help: read it sequentially with the copying read, or pre-fault the view (Region.Populate) before scanning it", share, valueText(read, GBps))
		}
	}
	if rnd != nil && rnd.Ratio > 0 && rnd.Ratio < 1 {
		line += fmt.Sprintf("; a random element from disk costs %s through the view against %s with pread: open it with mmapfile.AdviceRandom for lookups, so that a fault reads one page and not a window around it", valueText(rnd.Value, Micros), valueText(rnd.CeilingValue, Micros))
	}
	for _, f := range r.Figures {
		if f.Cold && strings.Contains(f.Note, "the kernel kept") {
			line += " (the kernel kept some pages cached: the cold figures are partly warm)"
			break
		}
	}
	return line
}

// WriteTable prints each record's figures as a table, then one line of
// advice per record.
func (res *FileResults) WriteTable(w io.Writer) error {
	var b strings.Builder
	for _, r := range res.Records {
		fmt.Fprintf(&b, "%s: %s, %s\n", r.File, r.title(), r.Format)
		tw := tabwriter.NewWriter(&b, 0, 0, 2, ' ', 0)
		fmt.Fprintf(tw, "  way\t\tvalue\tagainst\tceiling\tratio\tnote\n")
		for _, f := range r.Figures {
			ratio := "-"
			if f.Ratio > 0 {
				ratio = fmt.Sprintf("%.2f", f.Ratio)
			}
			fmt.Fprintf(tw, "  %s\t%s\t%s\t%s\t%s\t%s\t%s\n", f.Way, f.temp(), valueText(f.Value, f.Unit), f.Ceiling, valueText(f.CeilingValue, f.Unit), ratio, f.Note)
		}
		tw.Flush()
		if r.NoView != "" {
			fmt.Fprintf(&b, "  no view: %s\n", r.NoView)
		}
		b.WriteString("\n")
	}
	for _, r := range res.Records {
		fmt.Fprintf(&b, "%s\n", r.Advice)
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// WriteJSON prints the results as indented JSON.
func (res *FileResults) WriteJSON(w io.Writer) error { return writeJSON(w, res) }

func writeJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	return enc.Encode(v)
}

// writeFileReport writes files.md and, per record, a chart of its GB/s
// figures against their ceilings (record-N.png) into dir.
func writeFileReport(dir string, res *FileResults) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	var b strings.Builder
	fmt.Fprintf(&b, "# mmapkit bench of files\n\n%d CPUs. Ratios are each way against its ceiling, measured on the same bytes in the same run (higher is better).\n\n", res.CPUs)
	for n, r := range res.Records {
		chart := fmt.Sprintf("record-%d.png", n+1)
		if err := writeRecordChart(filepath.Join(dir, chart), &r); err != nil {
			return err
		}
		fmt.Fprintf(&b, "## %s: %s\n\n%s\n\n![%s](%s)\n\n", r.File, r.title(), r.Advice, r.Name, chart)
		if r.NoView != "" {
			fmt.Fprintf(&b, "No view: %s\n\n", r.NoView)
		}
		fmt.Fprintf(&b, "| way | | value | against | ceiling | ratio | note |\n|---|---|---:|---|---:|---:|---|\n")
		for _, f := range r.Figures {
			ratio := ""
			if f.Ratio > 0 {
				ratio = fmt.Sprintf("%.2f", f.Ratio)
			}
			fmt.Fprintf(&b, "| %s | %s | %s | %s | %s | %s | %s |\n", f.Way, f.temp(), valueText(f.Value, f.Unit), strings.ReplaceAll(f.Ceiling, "|", "\\|"), valueText(f.CeilingValue, f.Unit), ratio, f.Note)
		}
		b.WriteString("\n")
	}
	return os.WriteFile(filepath.Join(dir, "files.md"), []byte(b.String()), 0o644)
}

// writeRecordChart draws a record's GB/s figures as bars beside their
// ceilings.
func writeRecordChart(path string, r *RecordResult) error {
	p := plot.New()
	p.Title.Text = filepath.Base(r.File) + ": " + r.title()
	p.Y.Label.Text = "GB/s"
	var labels []string
	var vals, ceils plotter.Values
	for _, f := range r.Figures {
		if f.Unit != GBps {
			continue
		}
		way := f.Way
		if way == WayPeer {
			way = f.Ceiling
		}
		labels = append(labels, way+", "+f.temp())
		vals = append(vals, f.Value)
		ceils = append(ceils, f.CeilingValue)
	}
	if len(labels) == 0 {
		labels, vals, ceils = []string{"none"}, plotter.Values{0}, plotter.Values{0}
	}
	w := vg.Points(12)
	for k, s := range []struct {
		name string
		v    plotter.Values
	}{{"this way", vals}, {"its ceiling", ceils}} {
		bars, err := plotter.NewBarChart(s.v, w)
		if err != nil {
			return err
		}
		bars.Color = palette[k]
		bars.LineStyle.Width = 0
		bars.Offset = w * vg.Length(2*k-1) / 2
		p.Add(bars)
		p.Legend.Add(s.name, bars)
	}
	p.Legend.Top = true
	p.Y.Min = 0
	p.NominalX(labels...)
	p.X.Tick.Label.Rotation = 0.6
	p.X.Tick.Label.XAlign = -1 // draw.XRight
	return p.Save(vg.Length(max(7, len(labels)))*vg.Inch*0.8, 5*vg.Inch, path)
}
