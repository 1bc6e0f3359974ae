package benchmarks

import (
	"context"
	"io"
	"runtime"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func figureNamed(t *testing.T, res *Results, name string) *Figure {
	t.Helper()
	for i := range res.Figures {
		if res.Figures[i].Name == name {
			return &res.Figures[i]
		}
	}
	t.Fatalf("no figure %s", name)
	return nil
}

// The out-of-core figures, on a small file: values for all four, the
// scan's peak RSS beside it, the ratios against read(2) and pread.
func TestOutOfCoreFigures(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("the out-of-core figures need Linux")
	}
	o := tinyOptions(t)
	o.OutOfCore = 64 << 20
	o.Only = []string{"out_of_core_"}
	res, err := measureOnly(t, o)
	require.NoError(t, err)
	for _, name := range []string{"out_of_core_read", "out_of_core_scan", "out_of_core_random", "out_of_core_pread"} {
		f := figureNamed(t, res, name)
		require.NotNil(t, f.Value, "%s: %s", name, f.Note)
		assert.Greater(t, *f.Value, 0.0, name)
	}
	scan := figureNamed(t, res, "out_of_core_scan")
	assert.Regexp(t, `^a 64 MiB file, [0-9.]+× the memory; resident memory grew by \S+ \S+ at most \(read\(2\): \S+ \S+\)$`, scan.Note)
	require.NotNil(t, scan.Ratio, "against read(2) of the same file")
	require.NotNil(t, figureNamed(t, res, "out_of_core_random").Ratio, "against pread")
}

// Never in --quick; elsewhere only when asked for, and then only with
// room for the file.
func TestOutOfCoreNeedsRoom(t *testing.T) {
	o := tinyOptions(t)
	o.Only = []string{"out_of_core_scan"}
	o.Quick = true
	res, err := measureOnly(t, o)
	require.NoError(t, err)
	assert.Equal(t, "not measured: not part of --quick", figureNamed(t, res, "out_of_core_scan").Note)

	o = tinyOptions(t)
	o.Only = []string{"out_of_core_scan"}
	res, err = measureOnly(t, o)
	require.NoError(t, err)
	assert.Regexp(t, `^not measured: needs --out-of-core \(a file of (\S+ \S+, )?1\.5 times the memory\) and room for it on --dir$`, figureNamed(t, res, "out_of_core_scan").Note)

	if runtime.GOOS == "linux" {
		o = tinyOptions(t)
		o.Only = []string{"out_of_core_scan"}
		o.OutOfCore = 1 << 60
		res, err = measureOnly(t, o)
		require.NoError(t, err)
		assert.Regexp(t, `^not measured: needs \S+ \S+ free beside .* for a file of 1048576 TiB|^not measured: needs .* free beside`, figureNamed(t, res, "out_of_core_scan").Note)
	}
}

func measureOnly(t *testing.T, o Options) (*Results, error) {
	t.Helper()
	r, err := o.resolve()
	require.NoError(t, err)
	r.Progress = io.Discard
	return measure(context.Background(), r)
}
