package benchmarks

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mmapkit/mmapkit/format"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// tinyOptions runs the whole suite on a 1 MiB file, quickly.
func tinyOptions(t *testing.T) Options {
	return Options{
		Size:        1 << 20,
		RandomSize:  1 << 19,
		Dir:         t.TempDir(),
		randomCount: 2000,
		openRecords: []int{1, 100, 5000},
		repeat:      1,
	}
}

func TestRunTableAndReport(t *testing.T) {
	o := tinyOptions(t)
	o.Report = filepath.Join(t.TempDir(), "report")
	var progress, out bytes.Buffer
	o.Progress = &progress
	require.NoError(t, Run(context.Background(), o, &out))

	table := out.String()
	t.Log("\n" + table)
	for _, sp := range catalogue() {
		assert.Contains(t, table, sp.name, "table lists every figure")
	}
	for _, c := range ceilingOrder {
		assert.Contains(t, table, c)
	}
	assert.Contains(t, progress.String(), "bench: view_scan_f64")

	md, err := os.ReadFile(filepath.Join(o.Report, "report.md"))
	require.NoError(t, err)
	assert.Contains(t, string(md), "# mmapkit throughput report")
	assert.Contains(t, string(md), "![throughput against file size](chart.svg)")
	assert.Contains(t, string(md), "[chart.png](chart.png)", "the report names every chart it writes")
	assert.Contains(t, string(md), "## How to read the figures")
	assert.Regexp(t, `\d+ of \d+ goals met`, string(md))
	assert.Contains(t, table, "A ceiling is a reference way of doing the same work", "the table explains itself")
	assert.Contains(t, table, "figure  ", "and names what each figure measures")
	assert.Regexp(t, `\d+ of \d+ goals met`, table)
	assert.Contains(t, string(md), "| view_scan_f64 |")
	svg, err := os.ReadFile(filepath.Join(o.Report, "chart.svg"))
	require.NoError(t, err)
	assert.True(t, bytes.HasPrefix(bytes.TrimSpace(svg), []byte("<?xml")) || bytes.Contains(svg, []byte("<svg")), "chart is an SVG")
	assert.Contains(t, string(svg), "view_scan_f64", "chart has a legend entry per figure")
	png, err := os.ReadFile(filepath.Join(o.Report, "chart.png"))
	require.NoError(t, err)
	assert.True(t, bytes.HasPrefix(png, []byte("\x89PNG\r\n\x1a\n")), "chart.png is a PNG")

	// The temporary files are gone.
	left, err := os.ReadDir(o.Dir)
	require.NoError(t, err)
	assert.Empty(t, left)
}

func TestRunJSONDocument(t *testing.T) {
	o := tinyOptions(t)
	o.JSON = true
	var out bytes.Buffer
	require.NoError(t, Run(context.Background(), o, &out))

	var doc map[string]json.RawMessage
	require.NoError(t, json.Unmarshal(out.Bytes(), &doc), "stdout is one JSON document")
	assert.ElementsMatch(t, []string{"machine", "ceilings", "figures"}, keys(doc))

	var ceilings map[string]*float64
	require.NoError(t, json.Unmarshal(doc["ceilings"], &ceilings))
	for _, c := range []string{"ram_scan", "mmap_scan", "read", "cold_read", "memmove"} {
		require.Contains(t, ceilings, c)
		if c == "cold_read" && ceilings[c] == nil {
			continue // no posix_fadvise here
		}
		require.NotNil(t, ceilings[c], c)
		assert.Greater(t, *ceilings[c], 0.0, c)
	}

	var figs []map[string]any
	require.NoError(t, json.Unmarshal(doc["figures"], &figs))
	var names []string
	for _, f := range figs {
		name := f["name"].(string)
		names = append(names, name)
		units := 0
		for _, u := range []string{"gbps", "mbps", "us"} {
			if _, ok := f[u]; ok {
				units++
			}
		}
		assert.Equal(t, 1, units, "%s has exactly one value key", name)
		for _, k := range []string{"ceiling", "ratio", "goal", "note"} {
			assert.Contains(t, f, k, name)
		}
	}
	var want []string
	for _, sp := range catalogue() {
		want = append(want, sp.name)
	}
	assert.Equal(t, want, names, "every figure present, in order")

	var m Machine
	require.NoError(t, json.Unmarshal(doc["machine"], &m))
	assert.Equal(t, int64(1<<20), m.Size)
	assert.Equal(t, int64(1<<19), m.RandomSize)
	assert.Positive(t, m.CPUs)
}

// TestMeasureProducesEveryCoreFigure checks that every figure that needs
// no format package has a value, with a ratio against its reference,
// and that the rest are null with a note, never a number.
func TestMeasureProducesEveryCoreFigure(t *testing.T) {
	o := tinyOptions(t)
	res, err := Measure(context.Background(), o)
	require.NoError(t, err)
	require.Len(t, res.Figures, len(catalogue()))
	for _, sp := range catalogue() {
		f := res.figure(sp.name)
		require.NotNil(t, f, sp.name)
		switch {
		case sp.measure == nil:
			assert.Nil(t, f.Value, sp.name)
			assert.Nil(t, f.Ratio, sp.name)
			assert.True(t, strings.HasPrefix(f.Note, "not measured"), "%s: %q", sp.name, f.Note)
		case strings.HasPrefix(sp.name, "convert_"):
			// Measured when both formats are registered.
			from, to, _ := strings.Cut(strings.TrimPrefix(sp.name, "convert_"), "_")
			_, okFrom := format.Lookup(from)
			_, okTo := format.Lookup(to)
			if okFrom && okTo {
				require.NotNil(t, f.Value, "%s: %s", sp.name, f.Note)
			} else {
				assert.Nil(t, f.Value, sp.name)
				assert.Contains(t, f.Note, "is not registered in this build", sp.name)
			}
		case strings.HasPrefix(sp.name, "serve_"), sp.name == "nginx_raw_range":
			// Measured where nginx is installed.
			if f.Value == nil {
				assert.Contains(t, f.Note, "nginx", sp.name)
			}
		case strings.HasPrefix(sp.name, "out_of_core_"):
			assert.Nil(t, f.Value, "measured only when asked for: %s", sp.name)
			assert.Contains(t, f.Note, "needs --out-of-core", sp.name)
		case strings.HasPrefix(sp.name, "numpy_"), strings.HasPrefix(sp.name, "h5py_"), strings.HasPrefix(sp.name, "dask_"), sp.name == "cold_view_scan":
			// Measured where python3+numpy, h5py, dask / posix_fadvise exist.
			if f.Value == nil {
				assert.True(t, strings.HasPrefix(f.Note, "not measured"), "%s: %q", sp.name, f.Note)
			}
		default:
			require.NotNil(t, f.Value, "%s: %s", sp.name, f.Note)
			assert.Greater(t, *f.Value, 0.0, sp.name)
		}
		var ref *float64
		if c := res.Ceilings.field(f.Ceiling); c != nil {
			ref = *c
		} else if r := res.figure(f.Ceiling); r != nil {
			ref = r.Value
		}
		if f.Value != nil && ref != nil {
			assert.NotNil(t, f.Ratio, "%s has a ratio against %s", sp.name, f.Ceiling)
		}
	}
	// A figure measured beside its ceiling takes its ratio against the
	// ceiling's rate beside it, which the ceiling's own (best of the run)
	// is at least.
	v := res.figure("view_scan_f64")
	require.NotNil(t, v.CeilingValue)
	assert.InDelta(t, *v.Value / *v.CeilingValue, *v.Ratio, 1e-9)
	assert.LessOrEqual(t, *v.CeilingValue, *res.Ceilings.MmapScan)
	// A peer's ratio is mmapkit's lead: the same number seen from both
	// sides of the random-access pair.
	rv, rp := res.figure("random_view"), res.figure("random_pread")
	require.NotNil(t, rv.Ratio)
	assert.InDelta(t, *rv.Ratio, *rp.Ratio, 1e-9)
	assert.InDelta(t, *rp.Value / *rv.Value, *rv.Ratio, 1e-9)
}

func TestRunCancelled(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	err := Run(ctx, tinyOptions(t), &bytes.Buffer{})
	require.ErrorIs(t, err, context.Canceled)
}

func keys[V any](m map[string]V) []string {
	var ks []string
	for k := range m {
		ks = append(ks, k)
	}
	return ks
}

// TestConvert runs a conversion figure between two formats of this build
// (ABF, the figures' source, is registered once its package is): the
// output is read back and compared with the source, and a format that is
// not registered is a figure not measured.
func TestConvert(t *testing.T) {
	o, err := tinyOptions(t).resolve()
	require.NoError(t, err)
	s := &suite{ctx: context.Background(), o: o, dir: t.TempDir(), res: &Results{}}
	s.src = make([]float64, s.elems())
	fillF64(s.src, 0)
	for _, tt := range []struct{ from, to string }{{"daphne", "zarr"}, {"zarr", "daphne"}} {
		t.Run(tt.from+"_"+tt.to, func(t *testing.T) {
			v, n, err := s.convert(tt.from, tt.to)
			require.NoError(t, err)
			assert.Positive(t, v)
			assert.Equal(t, o.convSize, n)
			assert.Equal(t, s.cpSrc, "", "cp_sync's source restored")
		})
	}
	_, _, err = s.convert("no-such-format", "zarr")
	var nm *notMeasured
	require.ErrorAs(t, err, &nm)
	assert.Contains(t, nm.why, "no-such-format is not registered")
	left, err := os.ReadDir(s.dir)
	require.NoError(t, err)
	for _, e := range left {
		assert.True(t, strings.HasPrefix(e.Name(), "convert-src"), "only the sources are left: %s", e.Name())
	}
}

func TestOnly(t *testing.T) {
	o := tinyOptions(t)
	o.Only = []string{"view_scan", "edit_"}
	res, err := Measure(context.Background(), o)
	require.NoError(t, err)
	for _, f := range res.Figures {
		selected := strings.HasPrefix(f.Name, "view_scan") || strings.HasPrefix(f.Name, "edit_")
		if selected {
			assert.NotNil(t, f.Value, "%s: %s", f.Name, f.Note)
		} else {
			assert.Nil(t, f.Value, f.Name)
			assert.Equal(t, "not measured: not selected", f.Note, f.Name)
		}
	}
	assert.NotNil(t, res.Ceilings.MmapScan, "the ceilings are always measured")
	assert.NotNil(t, res.figure("edit_sync").Ratio, "an edit's ratio is against the pwrite + fdatasync beside it")
}
