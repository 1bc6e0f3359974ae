package benchmarks

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestExpectedSum(t *testing.T) {
	for _, n := range []int{0, 1, 7, 999, 1000, 1001, 12345} {
		xs := make([]float64, n)
		fillF64(xs, 0)
		want := 0.0
		for _, x := range xs {
			want += x
		}
		assert.Equal(t, want, expectedSum(n), "n=%d", n)
		assert.Equal(t, want, sumF64(xs), "n=%d", n)
		f32 := make([]float32, n)
		for i, x := range xs {
			f32[i] = float32(x)
		}
		assert.Equal(t, want, sumF32(f32), "n=%d", n)
	}
	require.Error(t, checkSum("x", 1, 3))
	require.NoError(t, checkSum("x", expectedSum(3), 3))
}

func TestResolve(t *testing.T) {
	tests := []struct {
		name      string
		in        Options
		size, rnd int64
		sweep     []int64
		repeat    int
		wantErr   bool
	}{
		{"defaults", Options{}, 1 << 30, 4 << 30, []int64{16 << 20, 64 << 20, 256 << 20, 1 << 30}, 5, false},
		{"size alone sets the random size", Options{Size: 256 << 20}, 256 << 20, 256 << 20, []int64{4 << 20, 16 << 20, 64 << 20, 256 << 20}, 5, false},
		{"quick: four times a 32 MiB last-level cache", Options{Quick: true, llc: 32 << 20}, 128 << 20, 128 << 20, []int64{2 << 20, 8 << 20, 32 << 20, 128 << 20}, 3, false},
		{"quick: small cache", Options{Quick: true, llc: 6 << 20}, 64 << 20, 64 << 20, []int64{1 << 20, 4 << 20, 16 << 20, 64 << 20}, 3, false},
		{"quick: cache unknown", Options{Quick: true, llc: -1}, 64 << 20, 64 << 20, []int64{1 << 20, 4 << 20, 16 << 20, 64 << 20}, 3, false},
		{"quick: huge cache, at most the default size", Options{Quick: true, llc: 1 << 30}, 1 << 30, 1 << 30, []int64{16 << 20, 64 << 20, 256 << 20, 1 << 30}, 3, false},
		{"quick: cache of an odd size rounds up to MiB", Options{Quick: true, llc: 40<<20 + 1}, 161 << 20, 161 << 20, nil, 3, false},
		{"size and random size", Options{Size: 100 << 20, RandomSize: 4 << 30}, 100 << 20, 4 << 30, []int64{1600 << 10, 6400 << 10, 25 << 20, 100 << 20}, 5, false},
		{"ragged sizes round down", Options{Size: 1000, RandomSize: 13}, 4096, 8, []int64{4096}, 5, false},
		{"negative", Options{Size: -1}, 0, 0, nil, 0, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r, err := tt.in.resolve()
			if tt.wantErr {
				require.Error(t, err)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tt.size, r.Size)
			assert.Equal(t, tt.rnd, r.RandomSize)
			if tt.sweep != nil {
				assert.Equal(t, tt.sweep, r.sweep)
			}
			assert.Equal(t, max(r.Size/2/64*64, 4096), r.convSize)
			assert.Equal(t, tt.repeat, r.repeat)
			assert.Equal(t, RandomCount, r.randomN)
			assert.Equal(t, []int{1, 1000, 100000}, r.records)
		})
	}
}

func TestLastLevelCache(t *testing.T) {
	dir := t.TempDir()
	write := func(index, level, typ, size string) {
		d := filepath.Join(dir, index)
		require.NoError(t, os.MkdirAll(d, 0o755))
		for name, v := range map[string]string{"level": level, "type": typ, "size": size} {
			require.NoError(t, os.WriteFile(filepath.Join(d, name), []byte(v+"\n"), 0o644))
		}
	}
	assert.Zero(t, lastLevelCacheIn(filepath.Join(dir, "missing")))
	write("index0", "1", "Data", "32K")
	write("index1", "1", "Instruction", "64K")
	assert.Equal(t, int64(32<<10), lastLevelCacheIn(dir))
	write("index2", "2", "Unified", "512K")
	write("index3", "3", "Unified", "32768K")
	write("index4", "2", "Unified", "8M")
	assert.Equal(t, int64(32<<20), lastLevelCacheIn(dir), "the highest level wins, not the largest size")
	write("index3", "3", "Unified", "bogus")
	assert.Equal(t, int64(8<<20), lastLevelCacheIn(dir), "an unreadable size is skipped")

	for _, tt := range []struct {
		in   string
		want int64
		ok   bool
	}{{"32768K", 32 << 20, true}, {"8M", 8 << 20, true}, {"1G", 1 << 30, true}, {"4096", 4096, true}, {"", 0, false}, {"-1K", 0, false}, {"K", 0, false}} {
		n, ok := parseCacheSize(tt.in)
		assert.Equal(t, tt.ok, ok, tt.in)
		assert.Equal(t, tt.want, n, tt.in)
	}
}

func TestFigureJSON(t *testing.T) {
	tests := []struct {
		name string
		fig  Figure
		want string
	}{
		{"measured throughput with goal met", Figure{Name: "a", Unit: GBps, Value: ptr(2), Ceiling: "mmap_scan", Ratio: ptr(0.96), Goal: ptr(0.95), GoalOf: "ratio", Bytes: 8, Meaningful: true},
			`{"name":"a","title":"","gbps":2,"ceiling":"mmap_scan","ceiling_value":null,"ratio":0.96,"goal":0.95,"goal_of":"ratio","met":true,"peer":false,"bytes":8,"note":"","also":null,"meaningful":true}`},
		{"not measured", Figure{Name: "b", Unit: MBps, Ceiling: "x", Goal: ptr(250), GoalOf: "value", Note: "not measured: why", Meaningful: true},
			`{"name":"b","title":"","mbps":null,"ceiling":"x","ceiling_value":null,"ratio":null,"goal":250,"goal_of":"value","met":null,"peer":false,"bytes":0,"note":"not measured: why","also":null,"meaningful":true}`},
		{"latency value goal", Figure{Name: "c", Unit: Micros, Value: ptr(3), Goal: ptr(2), GoalOf: "value", Meaningful: true},
			`{"name":"c","title":"","us":3,"ceiling":null,"ceiling_value":null,"ratio":null,"goal":2,"goal_of":"value","met":false,"peer":false,"bytes":0,"note":"","also":null,"meaningful":true}`},
		{"ratio against the ceiling beside it", Figure{Name: "g", Unit: GBps, Value: ptr(9), Ceiling: "mmap_scan", CeilingValue: ptr(10), Ratio: ptr(0.9), GoalOf: "ratio", Meaningful: true},
			`{"name":"g","title":"","gbps":9,"ceiling":"mmap_scan","ceiling_value":10,"ratio":0.9,"goal":null,"goal_of":"ratio","met":null,"peer":false,"bytes":0,"note":"","also":null,"meaningful":true}`},
		{"peer without goal", Figure{Name: "d", Unit: GBps, Value: ptr(1), Ceiling: "a", Ratio: ptr(2), GoalOf: "ratio", Peer: true, Meaningful: true},
			`{"name":"d","title":"","gbps":1,"ceiling":"a","ceiling_value":null,"ratio":2,"goal":null,"goal_of":"ratio","met":null,"peer":true,"bytes":0,"note":"","also":null,"meaningful":true}`},
		{"further ratios", Figure{Name: "e", Unit: GBps, Value: ptr(1), Ceiling: "gather", Ratio: ptr(0.9), Goal: ptr(0.9), GoalOf: "ratio", Also: map[string]float64{"memmove": 0.3}, Meaningful: true},
			`{"name":"e","title":"","gbps":1,"ceiling":"gather","ceiling_value":null,"ratio":0.9,"goal":0.9,"goal_of":"ratio","met":true,"peer":false,"bytes":0,"note":"","also":{"memmove":0.3},"meaningful":true}`},
		{"not meaningful: no verdict", Figure{Name: "f", Unit: GBps, Value: ptr(1), Ceiling: "mmap_scan", Ratio: ptr(1.2), Goal: ptr(0.95), GoalOf: "ratio", Note: "ratio not meaningful: …"},
			`{"name":"f","title":"","gbps":1,"ceiling":"mmap_scan","ceiling_value":null,"ratio":1.2,"goal":0.95,"goal_of":"ratio","met":null,"peer":false,"bytes":0,"note":"ratio not meaningful: …","also":null,"meaningful":false}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b, err := json.Marshal(tt.fig)
			require.NoError(t, err)
			assert.JSONEq(t, tt.want, string(b))
		})
	}
}

func TestComputeRatios(t *testing.T) {
	res := &Results{
		Ceilings: Ceilings{MmapScan: ptr(10), Memmove: ptr(20)},
		Figures: []Figure{
			{Name: "view", Unit: GBps, Value: ptr(9.5), Ceiling: "mmap_scan"},
			{Name: "readfile", Unit: GBps, Value: ptr(1.9), Ceiling: "view", Peer: true},
			{Name: "rview", Unit: Micros, Value: ptr(0.05), Ceiling: "rpread"},
			{Name: "rpread", Unit: Micros, Value: ptr(1.0), Ceiling: "rview", Peer: true},
			{Name: "nm", Unit: GBps, Ceiling: "memmove"},
			{Name: "cold", Unit: GBps, Value: ptr(1), Ceiling: "cold_read"},
			{Name: "mixed", Unit: MBps, Value: ptr(1), Ceiling: "memmove"},
			{Name: "scidb", Unit: GBps, Value: ptr(6), Ceiling: "gather", Also: map[string]float64{"memmove": 0, "cold_read": 0}},
		},
	}
	res.computeRatios()
	ratio := func(name string) *float64 { return res.figure(name).Ratio }
	assert.InDelta(t, 0.95, *ratio("view"), 1e-12)
	assert.InDelta(t, 5.0, *ratio("readfile"), 1e-12, "a peer's ratio is the lead over it")
	assert.InDelta(t, 20.0, *ratio("rview"), 1e-12, "a latency's ratio is reference/value")
	assert.InDelta(t, 20.0, *ratio("rpread"), 1e-12)
	assert.Nil(t, ratio("nm"), "not measured")
	assert.Nil(t, ratio("cold"), "ceiling not measured")
	assert.Nil(t, ratio("mixed"), "units differ")
	assert.Nil(t, ratio("scidb"), "gather not measured")
	assert.Equal(t, map[string]float64{"memmove": 0.3}, res.figure("scidb").Also, "further ratios; unmeasured ones dropped")
}

// fakePython writes an executable that stands in for python3 and prints
// out.
func fakePython(t *testing.T, out string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "python3")
	require.NoError(t, os.WriteFile(p, []byte("#!/bin/sh\ncat <<'EOF'\n"+out+"\nEOF\n"), 0o755))
	return p
}

func TestNumpyFigures(t *testing.T) {
	const size = 1 << 16
	sum := expectedSum(size / 8)
	tests := []struct {
		name     string
		python   string
		memmap   *float64 // GB/s
		fromfile *float64
		note     string
	}{
		{"numpy present", fmt.Sprintf(`{"version":"fake","memmap":0.001,"memmap_sum":%v,"fromfile":0.002,"fromfile_sum":%v}`, sum, sum),
			ptr(size / 0.001 / 1e9), ptr(size / 0.002 / 1e9), ""},
		{"numpy missing", `{"error":"numpy does not import: No module named 'numpy'"}`, nil, nil, "numpy does not import: No module named 'numpy'"},
		{"wrong sums", `{"version":"fake","memmap":0.001,"memmap_sum":1,"fromfile":0.002,"fromfile_sum":1}`, nil, nil, "not measured: error: numpy sums 1 and 1, want "},
		{"garbage", `Traceback`, nil, nil, "not measured: error: "},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o, err := Options{Size: size, repeat: 1, python: fakePython(t, tt.python)}.resolve()
			require.NoError(t, err)
			f64 := filepath.Join(t.TempDir(), "data.f64") // the reference's scans read it
			require.NoError(t, writeF64File(f64, size))
			s := &suite{ctx: context.Background(), o: o, f64: f64, res: &Results{}}
			for _, c := range []struct {
				name string
				want *float64
			}{{"numpy_memmap_sum", tt.memmap}, {"numpy_fromfile_sum", tt.fromfile}} {
				var sp spec
				for _, x := range catalogue() {
					if x.name == c.name {
						sp = x
					}
				}
				f := s.figure(sp)
				if c.want == nil {
					assert.Nil(t, f.Value)
					assert.Contains(t, f.Note, tt.note)
					continue
				}
				require.NotNil(t, f.Value, f.Note)
				assert.InDelta(t, *c.want, *f.Value, 1e-9)
				assert.Empty(t, f.Note)
			}
		})
	}
	t.Run("no python", func(t *testing.T) {
		o, err := Options{Size: size, repeat: 1, python: "/nonexistent/python3"}.resolve()
		require.NoError(t, err)
		s := &suite{ctx: context.Background(), o: o}
		_, _, err = s.numpyMemmap()
		var nm *notMeasured
		require.ErrorAs(t, err, &nm)
	})
}

func TestBestRepeatsUntilMinTime(t *testing.T) {
	s := &suite{ctx: context.Background(), o: &resolved{repeat: 2, minTime: 30 * time.Millisecond}}
	calls := 0
	start := time.Now()
	d, err := s.best(func() (time.Duration, error) {
		calls++
		time.Sleep(2 * time.Millisecond)
		return time.Duration(100-calls) * time.Millisecond, nil
	})
	took := time.Since(start)
	require.NoError(t, err)
	// It kept repeating for minTime (however slowly a loaded machine
	// sleeps), or until the cap of 50.
	assert.True(t, took >= 30*time.Millisecond || calls == 50, "stopped after %d calls in %v", calls, took)
	assert.GreaterOrEqual(t, calls, 2, "at least repeat times")
	assert.LessOrEqual(t, calls, 50)
	assert.Equal(t, time.Duration(100-calls)*time.Millisecond, d, "the best repetition")

	s.o.minTime = 0
	calls = 0
	_, err = s.best(func() (time.Duration, error) { calls++; return time.Millisecond, nil })
	require.NoError(t, err)
	assert.Equal(t, 2, calls)
}
