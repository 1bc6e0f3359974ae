//go:build linux

package reliability

import (
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mmapkit/mmapkit/abf"
	"github.com/mmapkit/mmapkit/daphne"
	"github.com/mmapkit/mmapkit/futhark"
	"github.com/mmapkit/mmapkit/mmapfile"
)

// seqValues are the values of record k: never zero, distinct per record.
func seqValues(k, n int) []float64 {
	v := make([]float64, n)
	for j := range v {
		v[j] = float64(k)*1e6 + float64(j) + 0.5
	}
	return v
}

// checkSeq reports the first element of v that is not seqValues(k, len(v)).
func checkSeq(k int, v []float64) error {
	for j, x := range v {
		if x != float64(k)*1e6+float64(j)+0.5 {
			return fmt.Errorf("record %d element %d is %v", k, j, x)
		}
	}
	return nil
}

// Many goroutines scan views of one read-only mapping while the same
// process appends to the file through another handle. The readers always
// see the values that were there; the reading handle's index is a snapshot
// and its views stay valid; fresh salvaging opens made during the appends
// see a prefix of whole records. Run with -race: the File's own state is
// shared between the goroutines.
func TestConcurrentViewsWhileAppending(t *testing.T) {
	const base, appends, n = 6, 40, 3000
	p := filepath.Join(t.TempDir(), "shared.abf")
	w, err := abf.OpenFile(p, mmapfile.ReadWrite, &abf.Options{Mode: "w"})
	require.NoError(t, err)
	for k := range base {
		require.NoError(t, abf.Write(w, "k"+strconv.Itoa(k), []int64{n}, seqValues(k, n)))
	}
	require.NoError(t, w.Close())

	reader, err := abf.Open(p, nil)
	require.NoError(t, err)
	defer reader.Close()
	appender, err := abf.OpenFile(p, mmapfile.ReadWrite, &abf.Options{Mode: "a"})
	require.NoError(t, err)

	var stop atomic.Bool
	var wg sync.WaitGroup
	errc := make(chan error, 64)
	var scans, opens, tornOpens, plainRefused atomic.Int64
	for g := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for round := 0; !stop.Load() || round < 3; round++ {
				k := (g + round) % base
				key := "k" + strconv.Itoa(k)
				v, err := abf.View[float64](reader, key)
				if err != nil {
					errc <- err
					return
				}
				if err := checkSeq(k, v); err != nil {
					errc <- err
					return
				}
				c, err := abf.Read[float64](reader, key)
				if err != nil {
					errc <- err
					return
				}
				if err := checkSeq(k, c); err != nil {
					errc <- err
					return
				}
				if len(reader.Entries()) != base {
					errc <- errors.New("the reading handle's index changed")
					return
				}
				scans.Add(1)
			}
		}()
	}
	// A goroutine opening the file afresh while it grows.
	wg.Add(1)
	go func() {
		defer wg.Done()
		for !stop.Load() {
			f, err := abf.Open(p, &abf.Options{Salvage: true})
			if err != nil {
				errc <- err
				return
			}
			opens.Add(1)
			if f.Damage() != nil {
				tornOpens.Add(1)
			}
			for i, rec := range f.Entries() {
				if rec.Name != "k"+strconv.Itoa(i) {
					errc <- fmt.Errorf("record %d is %q", i, rec.Name)
					break
				}
				v, err := abf.View[float64](f, rec.Name)
				if err == nil {
					err = checkSeq(i, v)
				}
				if err != nil {
					errc <- err
					break
				}
			}
			f.Close()
			// A plain open sees whole records or reports the one being
			// written as truncated.
			if f, err := abf.Open(p, nil); err == nil {
				f.Close()
			} else if errors.Is(err, mmapfile.ErrTruncated) {
				plainRefused.Add(1)
			} else {
				errc <- err
				return
			}
		}
	}()

	for k := base; k < base+appends; k++ {
		require.NoError(t, abf.Write(appender, "k"+strconv.Itoa(k), []int64{n}, seqValues(k, n)))
		require.NoError(t, appender.Sync())
	}
	stop.Store(true)
	wg.Wait()
	close(errc)
	for err := range errc {
		require.NoError(t, err)
	}
	require.NoError(t, appender.Close())

	// The old handle still serves its snapshot; a new one sees everything.
	v, err := abf.View[float64](reader, "k0")
	require.NoError(t, err)
	require.NoError(t, checkSeq(0, v))
	f, err := abf.Open(p, nil)
	require.NoError(t, err)
	defer f.Close()
	require.Len(t, f.Entries(), base+appends)
	last, err := abf.Read[float64](f, "k"+strconv.Itoa(base+appends-1))
	require.NoError(t, err)
	require.NoError(t, checkSeq(base+appends-1, last))
	t.Logf("%d scans; %d fresh opens during the appends: %d salvaging opens saw a record being written, %d plain opens refused one",
		scans.Load(), opens.Load(), tornOpens.Load(), plainRefused.Load())
}

// An "r+" handle appends while goroutines scan its own views and views of a
// read-only handle; then an in-place edit through it shows in the other
// handle's mapping (one page cache).
func TestConcurrentOwnViewsSurviveAppends(t *testing.T) {
	const n = 5000
	p := filepath.Join(t.TempDir(), "own.abf")
	w, err := abf.OpenFile(p, mmapfile.ReadWrite, &abf.Options{Mode: "w+"})
	require.NoError(t, err)
	defer w.Close()
	require.NoError(t, abf.Write(w, "k0", []int64{n}, seqValues(0, n)))
	require.NoError(t, w.Sync())
	own, err := abf.View[float64](w, "k0")
	require.NoError(t, err)
	ro, err := abf.Open(p, nil)
	require.NoError(t, err)
	defer ro.Close()
	other, err := abf.View[float64](ro, "k0")
	require.NoError(t, err)

	var wg sync.WaitGroup
	errc := make(chan error, 8)
	for range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 50 {
				if err := checkSeq(0, own); err != nil {
					errc <- err
					return
				}
				if err := checkSeq(0, other); err != nil {
					errc <- err
					return
				}
			}
		}()
	}
	for k := 1; k <= 30; k++ {
		require.NoError(t, abf.Write(w, "k"+strconv.Itoa(k), []int64{n}, seqValues(k, n)))
	}
	wg.Wait()
	close(errc)
	for err := range errc {
		require.NoError(t, err)
	}
	require.NoError(t, checkSeq(0, own), "a view taken before the appends")
	v30, err := abf.View[float64](w, "k30")
	require.NoError(t, err)
	require.NoError(t, checkSeq(30, v30))

	require.NoError(t, w.SetElement("k0", 7, mathBits(-1)))
	assert.Equal(t, -1.0, own[7])
	assert.Equal(t, -1.0, other[7], "the read-only mapping sees the edit")
}

func mathBits(x float64) []byte {
	b := make([]byte, 8)
	u := math.Float64bits(x)
	for i := range b {
		b[i] = byte(u >> (8 * i))
	}
	return b
}

func init() {
	// "open" opens the file the way arg says and reports "opened" or
	// "locked" (exit 3); "rw-wait" waits for the lock and then reports.
	children["abf-open"] = func(path string, mode int64) error {
		m := []string{"r", "r+", "w", "w+", "a"}[mode]
		f, err := abf.OpenFile(path, []mmapfile.Mode{mmapfile.ReadOnly, mmapfile.ReadWrite}[min(mode, 1)], &abf.Options{Mode: m})
		if err != nil {
			return err
		}
		fmt.Println("opened", len(f.Entries()))
		return f.Close()
	}
	children["futhark-rw"] = func(path string, _ int64) error {
		f, err := futhark.OpenFile(path, mmapfile.ReadWrite, nil)
		if err != nil {
			return err
		}
		fmt.Println("opened")
		return f.Close()
	}
	children["daphne-rw"] = func(path string, _ int64) error {
		f, err := daphne.OpenFile(path, mmapfile.ReadWrite, nil)
		if err != nil {
			return err
		}
		fmt.Println("opened")
		return f.Close()
	}
	children["mmapfile-rw-wait"] = func(path string, _ int64) error {
		fmt.Println("waiting")
		f, err := mmapfile.OpenFile(path, mmapfile.ReadWrite, &mmapfile.Options{Wait: true})
		if err != nil {
			return err
		}
		fmt.Println("opened")
		return f.Close()
	}
	// "abf-contend" appends record "p<arg>" through mode "a", retrying
	// while another writer holds the lock.
	children["abf-contend"] = func(path string, id int64) error {
		for tries := 0; ; tries++ {
			f, err := abf.OpenFile(path, mmapfile.ReadWrite, &abf.Options{Mode: "a"})
			if errors.Is(err, mmapfile.ErrLocked) {
				if tries == 0 {
					fmt.Println("locked")
				}
				time.Sleep(time.Millisecond)
				continue
			}
			if err != nil {
				return err
			}
			err = abf.Write(f, "p"+strconv.FormatInt(id, 10), []int64{20000}, seqValues(int(id), 20000))
			if cerr := f.Close(); err == nil {
				err = cerr
			}
			if err == nil {
				fmt.Println("done")
			}
			return err
		}
	}
}

// A second process cannot open a file for writing while this one holds it:
// every writing mode of abf, futhark and daphne fails with ErrLocked
// (and abf "w" does not truncate the file first); read-only opens are not
// blocked; a waiting open gets the file when the holder closes it.
func TestConcurrentLockAcrossProcesses(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "locked.abf")
	w, err := abf.OpenFile(p, mmapfile.ReadWrite, &abf.Options{Mode: "w"})
	require.NoError(t, err)
	require.NoError(t, abf.Write(w, "x", []int64{3}, []float64{1, 2, 3}))
	require.NoError(t, w.Sync())
	before := snap(t, p)

	for mode, name := range []string{"r", "r+", "w", "w+", "a"} {
		out, code := runChild(t, "abf-open", p, int64(mode))
		if name == "r" {
			assert.Equal(t, 0, code, "mode r takes no lock: %s", out)
			assert.Equal(t, "opened 1\n", out)
			continue
		}
		assert.Equal(t, exitLocked, code, "mode %s: %s", name, out)
		requireUnchanged(t, p, before)
	}

	// The lock is mmapfile's flock: a waiting open gets it when the abf
	// handle closes.
	child := startChild(t, "mmapfile-rw-wait", p, 0)
	require.Equal(t, "waiting", <-child.lines)
	time.Sleep(200 * time.Millisecond)
	select {
	case line, ok := <-child.lines:
		t.Fatalf("the waiting open did not wait: %q %v", line, ok)
	default:
	}
	require.NoError(t, w.Close())
	select {
	case line := <-child.lines:
		assert.Equal(t, "opened", line)
	case <-time.After(10 * time.Second):
		t.Fatal("the waiting open did not get the lock")
	}
	require.NoError(t, child.cmd.Wait())

	// futhark and daphne read-write opens use the same lock.
	fp := filepath.Join(dir, "x.fut")
	require.NoError(t, futhark.WriteFile(fp, nil, func(e *futhark.Encoder) error {
		v, err := futhark.NewValue([]int64{2}, []int32{1, 2})
		if err != nil {
			return err
		}
		return e.EncodeBinary(v)
	}))
	ff, err := futhark.OpenFile(fp, mmapfile.ReadWrite, nil)
	require.NoError(t, err)
	out, code := runChild(t, "futhark-rw", fp, 0)
	assert.Equal(t, exitLocked, code, out)
	require.NoError(t, ff.Close())
	out, code = runChild(t, "futhark-rw", fp, 0)
	assert.Equal(t, 0, code, out)

	dp := filepath.Join(dir, "x.dbdf")
	require.NoError(t, daphne.WriteDense(dp, 2, 2, []float64{1, 2, 3, 4}, nil))
	df, err := daphne.OpenFile(dp, mmapfile.ReadWrite, nil)
	require.NoError(t, err)
	out, code = runChild(t, "daphne-rw", dp, 0)
	assert.Equal(t, exitLocked, code, out)
	require.NoError(t, df.Close())
	out, code = runChild(t, "daphne-rw", dp, 0)
	assert.Equal(t, 0, code, out)
}

// Several processes append to one ABF file at once, each retrying while
// another holds the lock: every record lands whole, none is torn or lost.
func TestConcurrentAppendingProcesses(t *testing.T) {
	const procs = 4
	p := filepath.Join(t.TempDir(), "contended.abf")
	hold, err := abf.OpenFile(p, mmapfile.ReadWrite, &abf.Options{Mode: "w"})
	require.NoError(t, err)
	var children []*liveChild
	for id := range procs {
		children = append(children, startChild(t, "abf-contend", p, int64(id)))
	}
	for _, c := range children {
		require.Equal(t, "locked", <-c.lines, "every child finds the file locked first")
	}
	require.NoError(t, hold.Close()) // now they contend with each other
	for _, c := range children {
		var lines []string
		for line := range c.lines {
			lines = append(lines, line)
		}
		require.NoError(t, c.cmd.Wait(), c.stderr.String())
		require.Equal(t, []string{"done"}, lines)
	}
	f, err := abf.Open(p, nil)
	require.NoError(t, err)
	defer f.Close()
	var keys []string
	for _, rec := range f.Entries() {
		keys = append(keys, rec.Name)
		id, err := strconv.Atoi(strings.TrimPrefix(rec.Name, "p"))
		require.NoError(t, err)
		v, err := abf.Read[float64](f, rec.Name)
		require.NoError(t, err)
		require.NoError(t, checkSeq(id, v))
	}
	slices.Sort(keys)
	assert.Equal(t, []string{"p0", "p1", "p2", "p3"}, keys)
	fi, err := os.Stat(p)
	require.NoError(t, err)
	assert.Equal(t, f.Entries()[procs-1].End, fi.Size())
}
