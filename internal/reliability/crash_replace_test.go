//go:build linux

package reliability

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/mmapkit/mmapkit/daphne"
	"github.com/mmapkit/mmapkit/futhark"
	"github.com/mmapkit/mmapkit/mmapfile"
	"github.com/stretchr/testify/require"
)

// Writers that replace a whole file (futhark.WriteFile, daphne.WriteDense)
// write a temporary file beside the target and rename it. A child replaces
// the file again and again, each version numbered by an id that is in its
// values, and prints the id after each replacement returned; it is killed
// at random. Afterwards the file holds exactly the last reported version or
// the one after it, whole: never a mixture, never a partial file.

// replaceID numbers version i of round r.
func replaceID(round, i int) int { return round*100000 + i }

// replaceLoop runs the child role for crashRounds rounds on path. check
// returns the id of the version in the file, or -1 when there is no file.
func replaceLoop(t *testing.T, role, path string, check func(t *testing.T, path string) int) {
	rng := newRand(t)
	last := -1
	var reported, newer int
	for round := range crashRounds() {
		n, d := killPlan(rng)
		lines := startChild(t, role, path, int64(round)).killAfter(t, n, d)
		for i, line := range lines {
			require.Equal(t, strconv.Itoa(replaceID(round, i)), line, "child output")
		}
		reported += len(lines)
		allowed := []int{last, replaceID(round, 0)}
		if len(lines) > 0 {
			allowed = []int{replaceID(round, len(lines)-1), replaceID(round, len(lines))}
		}
		got := check(t, path)
		require.Contains(t, allowed, got, "round %d: the file holds version %d", round, got)
		if got == allowed[1] {
			newer++
		}
		last = got
	}
	var temps []string
	for _, name := range dirNames(t, filepath.Dir(path)) {
		if strings.HasPrefix(name, "."+filepath.Base(path)) {
			temps = append(temps, name)
		}
	}
	t.Logf("%d rounds: %d versions reported; %d times the file held the version after the last reported one; "+
		"%d temporary files left behind by killed writers", crashRounds(), reported, newer, len(temps))
}

// replaceChild runs write for versions (round, 0), (round, 1), …, printing
// each id after write returned.
func replaceChild(write func(path string, id int) error) func(string, int64) error {
	return func(path string, round int64) error {
		for i := range 10000 {
			id := replaceID(int(round), i)
			if err := write(path, id); err != nil {
				return err
			}
			fmt.Println(id)
		}
		return nil
	}
}

// futharkVersion is version id's values: the id, a 1-D f64 array and a 2-D
// i32 array whose sizes vary with id.
func futharkVersion(id int) []futhark.Value {
	n := 1 + id*7919%150000
	xs := make([]float64, n)
	for j := range xs {
		xs[j] = float64(id) + float64(j)/8
	}
	rows, cols := 1+id%17, 1+id%5
	ys := make([]int32, rows*cols)
	for j := range ys {
		ys[j] = int32(id ^ j)
	}
	v0, _ := futhark.NewValue(nil, []int64{int64(id)})
	v1, _ := futhark.NewValue([]int64{int64(n)}, xs)
	v2, _ := futhark.NewValue([]int64{int64(rows), int64(cols)}, ys)
	return []futhark.Value{v0, v1, v2}
}

func writeFutharkVersion(path string, id int) error {
	o := &futhark.Options{Align: []int{futhark.AlignNone, futhark.AlignElement, futhark.Align64}[id%3]}
	return futhark.WriteFile(path, o, func(e *futhark.Encoder) error {
		for _, v := range futharkVersion(id) {
			if err := e.EncodeBinary(v); err != nil {
				return err
			}
		}
		return nil
	})
}

func checkFutharkVersion(t *testing.T, path string) int {
	t.Helper()
	f, err := futhark.Open(path, nil)
	if errors.Is(err, os.ErrNotExist) {
		return -1
	}
	require.NoError(t, err)
	defer f.Close()
	require.Len(t, f.Entries(), 3)
	idv, err := futhark.Read[int64](f, 0)
	require.NoError(t, err)
	id := int(idv[0])
	for i, want := range futharkVersion(id) {
		got, err := f.Value(i)
		require.NoError(t, err)
		require.Equal(t, want.Type, got.Type, "version %d value %d", id, i)
		require.Equal(t, want.Shape, got.Shape, "version %d value %d", id, i)
		require.Equal(t, want.Data, got.Data, "version %d value %d", id, i)
	}
	return id
}

// daphneShape is version id's matrix shape: consecutive versions differ in
// their number of columns, so their .meta files differ too.
func daphneShape(id int) (rows, cols uint64) {
	return uint64(64 + id*37%512), uint64(16 + id%48)
}

func daphneVersion(id int) []float64 {
	rows, cols := daphneShape(id)
	v := make([]float64, rows*cols)
	for j := range v {
		v[j] = float64(id)*1e7 + float64(j) + 0.25
	}
	return v
}

func writeDaphneVersion(path string, id int) error {
	rows, cols := daphneShape(id)
	return daphne.WriteDense(path, rows, cols, daphneVersion(id), nil)
}

// checkDaphneVersion reads the matrix strictly. DAPHNE keeps a matrix in two
// files, replaced by two renames (data first), so a kill between them
// leaves the new data beside the old .meta: strict Open reports the
// disagreement and Lenient reads the data. That is tolerated, logged, and
// the .meta must then be the previous version's.
func checkDaphneVersion(t *testing.T, path string) int {
	t.Helper()
	f, err := daphne.Open(path, nil)
	if errors.Is(err, os.ErrNotExist) {
		return -1
	}
	stale := false
	if err != nil {
		t.Logf("strict open: %v", err)
		stale = true
		f, err = daphne.Open(path, &daphne.Options{Lenient: true})
	}
	require.NoError(t, err)
	defer f.Close()
	v, err := daphne.Read[float64](f, "matrix")
	require.NoError(t, err)
	require.NotEmpty(t, v)
	id := int(v[0] / 1e7)
	rows, cols := daphneShape(id)
	require.Equal(t, rows, f.Header().Rows, "version %d", id)
	require.Equal(t, cols, f.Header().Cols, "version %d", id)
	require.Equal(t, daphneVersion(id), v, "version %d", id)
	if stale {
		b, err := os.ReadFile(path + ".meta")
		require.NoError(t, err)
		m, err := daphne.ParseMeta(b)
		require.NoError(t, err)
		t.Logf("version %d: killed between the data and .meta renames; .meta is %+v", id, m)
	}
	return id
}

func init() {
	children["futhark-writefile"] = replaceChild(writeFutharkVersion)
	children["daphne-writedense"] = replaceChild(writeDaphneVersion)
}

func TestCrashFutharkWriteFile(t *testing.T) {
	replaceLoop(t, "futhark-writefile", filepath.Join(t.TempDir(), "crash.fut"), checkFutharkVersion)
}

func TestCrashDAPHNEWriteDense(t *testing.T) {
	replaceLoop(t, "daphne-writedense", filepath.Join(t.TempDir(), "crash.dbdf"), checkDaphneVersion)
}

// streamValue is value i of a streamed round: an f64 array, now and then
// one of a MiB, so that kills land inside payloads.
func streamValue(round, i int) futhark.Value {
	n := 1 + (round*7919+i*104729)%9000
	if i%4 == 3 {
		n = 1<<17 + round
	}
	xs := make([]float64, n)
	for j := range xs {
		xs[j] = float64(round*1000+i) + float64(j%977)/4 + 0.5
	}
	v, _ := futhark.NewValue([]int64{int64(n)}, xs)
	return v
}

func init() {
	// "futhark-stream" creates the file and streams values into it with
	// an Encoder (the way a program writes its output), printing i after
	// value i was written (and, in even rounds, synced).
	children["futhark-stream"] = func(path string, round int64) error {
		out, err := os.Create(path)
		if err != nil {
			return err
		}
		align := []int{futhark.AlignNone, futhark.AlignElement, futhark.Align64}[round%3]
		enc := futhark.NewWriter(out, 0, &futhark.Options{Align: align})
		for i := range 10000 {
			if err := enc.EncodeBinary(streamValue(int(round), i)); err != nil {
				return err
			}
			if syncs(int(round)) {
				if err := out.Sync(); err != nil {
					return err
				}
			}
			fmt.Println(i)
		}
		return out.Close()
	}
}

// A stream of Futhark values has no index to repair: a kill can leave a
// value cut short at the end. Reading it back gives every reported value
// whole and then an error for the cut one (Decoder), or refuses the file
// (Open); a partial value is never returned as a value.
func TestCrashFutharkStream(t *testing.T) {
	rng := newRand(t)
	dir := t.TempDir()
	var reported, torn int
	for round := range crashRounds() {
		p := filepath.Join(dir, fmt.Sprintf("stream%d.fut", round))
		n, d := killPlan(rng)
		lines := startChild(t, "futhark-stream", p, int64(round)).killAfter(t, n, d)
		for i, line := range lines {
			require.Equal(t, strconv.Itoa(i), line, "child output")
		}
		reported += len(lines)
		in, err := os.Open(p)
		if errors.Is(err, os.ErrNotExist) {
			require.Empty(t, lines)
			continue
		}
		require.NoError(t, err)
		dec := futhark.NewDecoder(in)
		var got int
		var end error
		for {
			v, err := dec.Value()
			if err != nil {
				end = err
				break
			}
			want := streamValue(round, got)
			require.Equal(t, want.Shape, v.Shape, "round %d value %d", round, got)
			require.Equal(t, want.Data, v.Data, "round %d value %d", round, got)
			got++
		}
		require.NoError(t, in.Close())
		require.GreaterOrEqual(t, got, len(lines), "round %d: reported values are missing", round)
		require.LessOrEqual(t, got, len(lines)+1, "round %d", round)

		f, err := futhark.Open(p, nil)
		if end == io.EOF {
			require.NoError(t, err, "round %d", round)
			require.Len(t, f.Entries(), got)
			for i := range got {
				xs, err := futhark.Read[float64](f, i)
				require.NoError(t, err)
				want, err := futhark.Elems[float64](streamValue(round, i))
				require.NoError(t, err)
				require.Equal(t, want, xs, "round %d value %d", round, i)
			}
			require.NoError(t, f.Close())
			continue
		}
		torn++
		require.ErrorIs(t, end, mmapfile.ErrTruncated, "round %d: the cut value", round)
		require.ErrorIs(t, err, mmapfile.ErrTruncated, "round %d: Open must refuse a cut value", round)
	}
	t.Logf("%d rounds: %d values reported, %d rounds ended inside a value", crashRounds(), reported, torn)
}
