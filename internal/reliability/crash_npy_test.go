//go:build linux

package reliability

import (
	"archive/zip"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mmapkit/mmapkit/internal/oracle"
	"github.com/mmapkit/mmapkit/layout"
	"github.com/mmapkit/mmapkit/mmapfile"
	"github.com/mmapkit/mmapkit/npy"
)

// npyCols is the width of the rows the append test grows a .npy by.
const npyCols = 4

// npyRows is how many rows append (round, i) adds: mostly a few, every
// fifth one 8192 (256 KiB), long enough to be killed in the middle.
func npyRows(round, i int) int {
	if i%5 == 4 {
		return 8192
	}
	return 1 + (round*31+i*7)%13
}

// npyRowValue is the value of column c of the row that has index row in
// the file: never zero, so that allocated but unwritten data cannot pass.
func npyRowValue(row int64, c int) float64 { return float64(row)*8 + float64(c) + 1 }

func init() {
	// "npy-append" opens the .npy read-write (bytes a torn append the
	// last kill left after the data are kept; the next append writes
	// over them), then appends rows and prints, after each append
	// (synced in even rounds), the file's row count.
	children["npy-append"] = func(path string, round int64) error {
		f, err := npy.OpenFile(path, mmapfile.ReadWrite, nil)
		if err != nil {
			return err
		}
		a, _ := f.Lookup("0")
		rows := a.Shape[0]
		for i := 0; i < 100000; i++ {
			n := npyRows(int(round), i)
			vals := make([]float64, n*npyCols)
			for r := 0; r < n; r++ {
				for c := 0; c < npyCols; c++ {
					vals[r*npyCols+c] = npyRowValue(rows+int64(r), c)
				}
			}
			if err := npy.Append(f, vals); err != nil {
				return err
			}
			if syncs(int(round)) {
				if err := f.Sync(); err != nil {
					return err
				}
			}
			rows += int64(n)
			fmt.Println(rows)
		}
		return f.Close()
	}
	// "npz-edit" opens an .npz read-write (repairing what the last kill
	// left) and changes elements of its
	// stored members, by Set and through a writable view, printing each
	// edit once made; in even rounds it syncs (rewrites the CRCs) after
	// every edit.
	children["npz-edit"] = func(path string, round int64) error {
		f, err := npy.OpenFile(path, mmapfile.ReadWrite, &npy.Options{Repair: true})
		if err != nil {
			return err
		}
		view, err := npy.View[int32](f, "b")
		if err != nil {
			return err
		}
		for i := 0; i < 1000000; i++ {
			k := i % npzElems
			if i%2 == 0 {
				if err := npy.Set(f, "a", []int64{int64(k)}, npzValue(int(round), i)); err != nil {
					return err
				}
			} else {
				view[k] = int32(int(round)*1000000 + i)
			}
			if syncs(int(round)) {
				if err := f.Sync(); err != nil {
					return err
				}
			}
			fmt.Println(i)
		}
		return f.Close()
	}
}

// A process appending rows to a .npy is killed at random moments. After
// each kill a read-only open sees a whole array of at least the rows
// reported and at most one more append's, every value right, and no
// torn row (a torn append leaves bytes after the data, which readers
// ignore, NumPy's included); a read-write open keeps those bytes, and the
// next append writes over them. NumPy reads the final file.
func TestCrashNPYAppend(t *testing.T) {
	rng := newRand(t)
	p := filepath.Join(t.TempDir(), "crash.npy")
	require.NoError(t, npy.Save(p, []int64{0, npyCols}, layout.RowMajor, []float64{}))
	var known int64
	torn := 0
	for round := range crashRounds() {
		n, d := killPlan(rng)
		lines := startChild(t, "npy-append", p, int64(round)).killAfter(t, n, d)
		reported := known
		for _, l := range lines {
			v, err := strconv.ParseInt(l, 10, 64)
			require.NoError(t, err, "child output %q", l)
			require.Greater(t, v, reported)
			reported = v
		}
		f, err := npy.Open(p, nil)
		require.NoError(t, err, "round %d: a reader opens what a killed appender left", round)
		a, _ := f.Lookup("0")
		rows := a.Shape[0]
		require.GreaterOrEqual(t, rows, reported, "round %d: reported rows are missing", round)
		require.LessOrEqual(t, rows, reported+8192, "round %d: more rows than were written", round)
		vals, err := npy.Read[float64](f, "0")
		require.NoError(t, err)
		for i, v := range vals {
			if want := npyRowValue(int64(i/npyCols), i%npyCols); v != want {
				t.Fatalf("round %d: element %d is %v, want %v", round, i, v, want)
			}
		}
		require.NoError(t, f.Close())
		fi, err := os.Stat(p)
		require.NoError(t, err)
		if fi.Size() > a.Offset+a.Size {
			torn++
		}
		known = rows
	}
	before, err := os.ReadFile(p)
	require.NoError(t, err)
	w, err := npy.OpenFile(p, mmapfile.ReadWrite, &npy.Options{Repair: true})
	require.NoError(t, err)
	require.NoError(t, w.Damage(), "bytes after a .npy's data are not damage")
	require.NoError(t, w.Close())
	after, err := os.ReadFile(p)
	require.NoError(t, err)
	require.Equal(t, before, after, "a read-write open, even a repairing one, keeps bytes after the data")
	t.Logf("%d rounds: %d rows in the file, %d rounds left a torn append behind the data", crashRounds(), known, torn)
	if out := numpyOutput(t, `
import sys, numpy as np
a = np.load(sys.argv[1]); i = np.arange(a.size).reshape(a.shape)
print(a.shape[0], bool((a == (i // 4) * 8 + i % 4 + 1).all()))`, p); out != "" {
		assert.Equal(t, fmt.Sprintf("%d True", known), out)
	}
}

const npzElems = 1 << 16

func npzValue(round, i int) float64 { return float64(round+1)*1e7 + float64(i) }

// A process editing stored members of an .npz in place is killed at
// random moments. After each kill every edit it reported is in the file;
// a read-only open either finds the CRC-32s right or reports them stale
// (ErrCRC); a read-write open refuses stale ones and changes nothing, one
// with Repair repairs them, and then archive/zip checks every member's
// CRC without error.
func TestCrashNPZEdit(t *testing.T) {
	rng := newRand(t)
	p := filepath.Join(t.TempDir(), "crash.npz")
	z, err := npy.CreateZip(p, nil)
	require.NoError(t, err)
	require.NoError(t, npy.AddArray(z, "a", []int64{npzElems}, layout.RowMajor, make([]float64, npzElems)))
	require.NoError(t, npy.AddArray(z, "b", []int64{npzElems}, layout.RowMajor, make([]int32, npzElems)))
	require.NoError(t, z.Close())
	stale, repaired := 0, 0
	for round := range crashRounds() {
		n, d := killPlan(rng)
		lines := startChild(t, "npz-edit", p, int64(round)).killAfter(t, n, d)
		f, err := npy.Open(p, nil)
		if err != nil {
			require.ErrorIs(t, err, npy.ErrCRC, "round %d", round)
			stale++
		} else {
			require.NoError(t, f.Close())
		}
		if err != nil {
			killed, rerr := os.ReadFile(p)
			require.NoError(t, rerr)
			_, err = npy.OpenFile(p, mmapfile.ReadWrite, nil)
			require.ErrorIs(t, err, mmapfile.ErrNeedsRepair, "round %d", round)
			after, rerr := os.ReadFile(p)
			require.NoError(t, rerr)
			require.Equal(t, killed, after, "round %d: a refused open changes nothing", round)
		}
		w, err := npy.OpenFile(p, mmapfile.ReadWrite, &npy.Options{Repair: true})
		require.NoError(t, err, "round %d", round)
		if d := w.Damage(); errors.Is(d, npy.ErrCRC) {
			repaired++
		} else if d != nil {
			// Killed after the mark was made durable but before the data
			// (or after the CRC-32s were recorded but before the mark
			// was cleared): only the mark is left.
			require.Contains(t, d.Error(), "cleared the mark of an interrupted edit (its CRC-32 was right)", "round %d", round)
		}
		require.NoError(t, w.Close())
		require.NoError(t, zipReadAll(p), "round %d: CRCs after the repair", round)
		r, err := npy.Open(p, nil)
		require.NoError(t, err)
		av, err := npy.Read[float64](r, "a")
		require.NoError(t, err)
		bv, err := npy.Read[int32](r, "b")
		require.NoError(t, err)
		for _, l := range lines {
			i, err := strconv.Atoi(l)
			require.NoError(t, err)
			k := i % npzElems
			if i+npzElems <= len(lines) {
				continue // overwritten later in the round (the edit in flight included)
			}
			if i%2 == 0 {
				require.Equal(t, npzValue(round, i), av[k], "round %d: edit %d", round, i)
			} else {
				require.Equal(t, int32(round*1000000+i), bv[k], "round %d: edit %d", round, i)
			}
		}
		require.NoError(t, r.Close())
	}
	t.Logf("%d rounds: %d read-only opens found stale CRC-32s, %d read-write opens repaired them", crashRounds(), stale, repaired)
	if out := numpyOutput(t, `
import sys, zipfile, numpy as np
print(zipfile.ZipFile(sys.argv[1]).testzip(), sorted(np.load(sys.argv[1]).keys()))`, p); out != "" {
		assert.Equal(t, "None ['a', 'b']", out)
	}
}

// zipReadAll reads every member with archive/zip, which checks CRC-32s.
func zipReadAll(path string) error {
	r, err := zip.OpenReader(path)
	if err != nil {
		return err
	}
	defer r.Close()
	for _, f := range r.File {
		rc, err := f.Open()
		if err != nil {
			return err
		}
		_, err = io.Copy(io.Discard, rc)
		rc.Close()
		if err != nil {
			return errors.Join(fmt.Errorf("member %s", f.Name), err)
		}
	}
	return nil
}

// numpyOutput runs a script in a Python with NumPy, if there is one here,
// and returns its output without the final newline ("" without NumPy).
func numpyOutput(t *testing.T, script string, args ...string) string {
	t.Helper()
	py := oracle.Find("numpy")
	if py == "" {
		t.Log("no NumPy here: the final file is not checked by NumPy")
		return ""
	}
	out, err := oracle.Output(py, script, args...)
	require.NoError(t, err)
	return strings.TrimSpace(out)
}
