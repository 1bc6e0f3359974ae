package benchmarks

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"slices"
	"time"

	"github.com/mmapkit/mmapkit/format"
	"github.com/mmapkit/mmapkit/layout"
	"github.com/mmapkit/mmapkit/mmapfile"
)

// The write side: every figure writes a new file (or store) and makes it
// durable, and is measured alternately with its ceiling — write(2) of the
// same bytes + fsync, or a copy of the same bytes + fsync (ceilings.go) —
// so that both see the same moments of the disk and of a busy machine.

// writeSync is the write_sync ceiling: the bytes written to a new file
// with write(2), in chunks of format.StreamBytes (as a conversion's writer
// gets them), then fsync. One write(2) of a whole large buffer is slower
// (512 MiB here: 0.57 s in write(2) against 0.17 s in 8 MiB chunks).
func writeSync(path string, b []byte) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	for off := 0; off < len(b); off += format.StreamBytes {
		if _, err := f.Write(b[off:min(off+format.StreamBytes, len(b))]); err != nil {
			f.Close()
			return err
		}
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// CopySync is the cp_sync ceiling, `cp src dst && sync dst`: the file
// copied to a new one in the kernel (io.Copy between two files is
// copy_file_range on Linux, as in GNU cp), then fsync — the pace at which
// the disk takes the same bytes, against which conversions are measured.
func CopySync(src, dst string) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.Create(dst)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	if err := out.Sync(); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}

// treeSize is the size of a file, or of every file under a directory.
func treeSize(path string) (int64, error) {
	var n int64
	err := filepath.WalkDir(path, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		fi, err := d.Info()
		if err == nil {
			n += fi.Size()
		}
		return err
	})
	return n, err
}

// clear removes path (a file or a directory) and the files beside it
// that a format writes with it (DAPHNE's path.meta), and syncs the suite's
// directory, so that the removal — and the blocks it frees — is committed
// before the next write is timed, not by that write's fsync.
func (s *suite) clear(path string) error {
	side, err := filepath.Glob(path + ".*")
	if err != nil {
		return err
	}
	for _, p := range append(side, path) {
		if err := os.RemoveAll(p); err != nil {
			return err
		}
	}
	d, err := os.Open(s.dir)
	if err != nil {
		return err
	}
	defer d.Close()
	return d.Sync()
}

// writeOnce times write creating path, checks that it wrote at least n
// bytes, and removes what it wrote.
func (s *suite) writeOnce(path string, n int64, write func(path string) error) (time.Duration, error) {
	if err := s.clear(path); err != nil {
		return 0, err
	}
	d, err := timed(func() error { return write(path) })
	if err != nil {
		return 0, err
	}
	size, err := treeSize(path)
	if err != nil {
		return 0, err
	}
	if size < n {
		return 0, fmt.Errorf("%s: wrote %d bytes, want at least %d", path, size, n)
	}
	return d, s.clear(path)
}

// writeRate times write (best of the repetitions, each beside the
// figure's ceiling) and returns GB/s of n bytes.
func (s *suite) writeRate(name string, n int64, write func(path string) error) (float64, int64, error) {
	p := s.path(name)
	d, err := s.best(func() (time.Duration, error) { return s.writeOnce(p, n, write) })
	if err != nil {
		return 0, 0, err
	}
	return gbps(n, d), n, nil
}

// createFillView creates a file, grows it, maps it, prepares the mapping
// for writing (PopulateWrite), fills a float64 view and closes the file,
// which syncs: how mmapkit creates an array on disk.
func (s *suite) createFillView() (float64, int64, error) {
	n := int64(len(s.src)) * 8
	return s.writeRate("write.out", n, func(p string) error {
		f, err := mmapfile.Create(p)
		if err != nil {
			return err
		}
		if err := fillView(f, s.src); err != nil {
			f.Close()
			return err
		}
		return f.Close()
	})
}

func fillView(f *mmapfile.File, src []float64) error {
	if err := f.Grow(int64(len(src)) * 8); err != nil {
		return err
	}
	r, err := f.MapAll()
	if err != nil {
		return err
	}
	if err := r.PopulateWrite(); err != nil {
		return err
	}
	xs, err := mmapfile.View[float64](r, 0, len(src), layout.HostOrder())
	if err != nil {
		return err
	}
	copy(xs, src)
	return nil
}

// median returns the median latency in µs of reps runs of fn.
func (s *suite) median(fn func(i int) (time.Duration, error)) (float64, error) {
	ds := make([]time.Duration, 0, s.o.latReps)
	for i := range s.o.latReps {
		if err := s.ctx.Err(); err != nil {
			return 0, err
		}
		d, err := fn(i)
		if err != nil {
			return 0, err
		}
		ds = append(ds, d)
	}
	return medianMicros(ds), nil
}

func medianMicros(ds []time.Duration) float64 {
	ds = slices.Clone(ds)
	slices.Sort(ds)
	return ds[len(ds)/2].Seconds() * 1e6
}

// editPaired measures the median latency of edit(k) — one element
// changed and made durable — each repetition right after pwrite +
// fdatasync of 8 bytes of the f64 file. The figure's ratio is taken
// against that median (pairedUs); the pwrite_fdatasync figure reports the
// lowest of them. undo(k), untimed, puts the element back.
func (s *suite) editPaired(edit, undo func(k int) error) (float64, error) {
	pf, err := os.OpenFile(s.f64, os.O_RDWR, 0)
	if err != nil {
		return 0, err
	}
	defer pf.Close()
	idx := randomIndexes(s.o.latReps, s.elems())
	var pw, ed []time.Duration
	for k := range s.o.latReps {
		if err := s.ctx.Err(); err != nil {
			return 0, err
		}
		d, err := pwriteOnce(pf, int64(idx[len(idx)-1-k])*8)
		if err != nil {
			return 0, err
		}
		pw = append(pw, d)
		d, err = timed(func() error { return edit(k) })
		if err != nil {
			return 0, err
		}
		ed = append(ed, d)
		if err := undo(k); err != nil {
			return 0, err
		}
	}
	s.pairedUs = medianMicros(pw)
	if s.pwriteUs == 0 || s.pairedUs < s.pwriteUs {
		s.pwriteUs = s.pairedUs
	}
	return medianMicros(ed), nil
}

// pwriteOnce times pwrite of 8 changed bytes at off + fdatasync, then puts
// them back (untimed, synced).
func pwriteOnce(f *os.File, off int64) (time.Duration, error) {
	var old, b [8]byte
	if _, err := f.ReadAt(old[:], off); err != nil {
		return 0, err
	}
	b = old
	b[0] ^= 1
	d, err := timed(func() error {
		if _, err := f.WriteAt(b[:], off); err != nil {
			return err
		}
		return fdatasync(f)
	})
	if err != nil {
		return 0, err
	}
	if _, err := f.WriteAt(old[:], off); err != nil {
		return 0, err
	}
	return d, fdatasync(f)
}

// editSync changes one element of the f64 file with File.WriteAt (pwrite
// through mmapkit's descriptor) and SyncData, each repetition at another
// random element; the file ends as it began.
func (s *suite) editSync() (float64, int64, error) {
	f, err := mmapfile.OpenFile(s.f64, mmapfile.ReadWrite, nil)
	if err != nil {
		return 0, 0, err
	}
	defer f.Close()
	idx := randomIndexes(s.o.latReps, s.elems())
	var old [8]byte
	put := func(k int, b []byte) error {
		if _, err := f.WriteAt(b, int64(idx[k])*8); err != nil {
			return err
		}
		return f.SyncData()
	}
	us, err := s.editPaired(func(k int) error {
		if _, err := f.ReadAt(old[:], int64(idx[k])*8); err != nil {
			return err
		}
		var b [8]byte
		binary.LittleEndian.PutUint64(b[:], math.Float64bits(math.Float64frombits(binary.LittleEndian.Uint64(old[:]))+1))
		return put(k, b[:])
	}, func(k int) error { return put(k, old[:]) })
	return us, 8, err
}

// editViewSync changes one element through a read-write view and syncs
// with File.Sync: the store dirties the element's whole page (which the
// kernel may hold as one large folio), and the sync writes all of it.
func (s *suite) editViewSync() (float64, int64, error) {
	f, xs, err := openViewF64(s.f64, mmapfile.ReadWrite, nil)
	if err != nil {
		return 0, 0, err
	}
	defer f.Close()
	idx := randomIndexes(s.o.latReps, len(xs))
	var old float64
	us, err := s.editPaired(func(k int) error {
		old = xs[idx[k]]
		xs[idx[k]] = old + 1
		return f.Sync()
	}, func(k int) error {
		xs[idx[k]] = old
		return f.Sync()
	})
	return us, 8, err
}

// pwriteSync is the pwrite_fdatasync figure: the median the edit figures
// measured beside them, or, when none ran, its own.
func (s *suite) pwriteSync() (float64, int64, error) {
	if s.pwriteUs > 0 {
		return s.pwriteUs, 8, nil
	}
	f, err := os.OpenFile(s.f64, os.O_RDWR, 0)
	if err != nil {
		return 0, 0, err
	}
	defer f.Close()
	idx := randomIndexes(s.o.latReps, s.elems())
	us, err := s.median(func(k int) (time.Duration, error) { return pwriteOnce(f, int64(idx[k])*8) })
	return us, 8, err
}

// memSource is a format.Source of one f64 array held in memory, in the
// given storage order: the source the suite writes its format files from.
func newMemSource(name string, b []byte, shape []int64, order layout.Order) format.Source {
	a := layout.Array{Name: name, Type: layout.F64, Shape: shape, Order: order, Offset: -1, Size: int64(len(b))}
	return format.Memory([]format.Record{{Array: a, Kind: format.KindArray}}, [][]byte{b})
}

// matrixShape is a near-square 2-D shape of n elements (n a multiple of
// 8): the column count is a power of two.
func matrixShape(n int64) []int64 {
	cols := int64(1)
	for cols*cols*4 <= n && n%(cols*2) == 0 {
		cols *= 2
	}
	return []int64{n / cols, cols}
}

// convertSource writes, once, the conversions' source: a column-major f64
// array of convSize bytes in a file of format from, written through the
// registry.
func (s *suite) convertSource(from format.Format) (string, error) {
	if p, ok := s.convSrc[from.Name]; ok {
		return p, nil
	}
	p := s.path("convert-src" + extension(from))
	b := asBytes(s.src)[:s.o.convSize]
	src := newMemSource("x", b, matrixShape(s.o.convSize/8), layout.ColMajor)
	if err := format.Write(p, src, &format.Options{Format: from.Name}); err != nil {
		return "", err
	}
	if err := settle(p); err != nil {
		return "", err
	}
	if s.convSrc == nil {
		s.convSrc = map[string]string{}
	}
	s.convSrc[from.Name] = p
	return p, nil
}

// extension is the first file name extension a format lists.
func extension(f format.Format) string {
	if len(f.Extensions) > 0 {
		return f.Extensions[0]
	}
	return "." + f.Name
}

// convert converts the source file of format from into format to with
// format.Convert, against cp_sync of the source file, after checking once
// that the conversion holds the same values.
func (s *suite) convert(from, to string) (float64, int64, error) {
	ff, ok := format.Lookup(from)
	if !ok {
		return 0, 0, &notMeasured{"format " + from + " is not registered in this build"}
	}
	tf, ok := format.Lookup(to)
	if !ok {
		return 0, 0, &notMeasured{"format " + to + " is not registered in this build"}
	}
	if tf.Write == nil {
		return 0, 0, &notMeasured{"format " + to + " cannot be written"}
	}
	src, err := s.convertSource(ff)
	if err != nil {
		return 0, 0, err
	}
	if to == convertTargets[len(convertTargets)-1] {
		// The last conversion: the source leaves the page cache to the
		// figures after it.
		defer func() {
			os.Remove(src)
			delete(s.convSrc, from)
		}()
	}
	out := s.path("convert.out" + extension(tf))
	o := &format.Options{Format: to}
	conv := func(p string) error { return format.Convert(src, p, nil, o) }
	err = conv(out)
	if err == nil {
		err = s.checkConverted(out, o)
	}
	if cerr := s.clear(out); err == nil {
		err = cerr
	}
	if err != nil {
		return 0, 0, err
	}
	// cp_sync copies the same file while the conversion is measured.
	defer func(prev string) { s.cpSrc = prev }(s.cpSrc)
	s.cpSrc = src
	return s.writeRate(filepath.Base(out), s.o.convSize, conv)
}

// checkConverted reads a conversion's output back through the registry and
// compares it with the source, element for element.
func (s *suite) checkConverted(path string, o *format.Options) error {
	f, err := format.Open(path, o)
	if err != nil {
		return err
	}
	defer f.Close()
	// The array keeps its name where the format stores names.
	i := 0
	if len(f.Records()) != 1 {
		if i, err = format.Find(f, "x"); err != nil {
			return fmt.Errorf("%s: %w", path, err)
		}
	}
	rec := f.Records()[i]
	want := matrixShape(s.o.convSize / 8)
	if rec.Type != layout.F64 || len(rec.Shape) != 2 || rec.Shape[0] != want[0] || rec.Shape[1] != want[1] {
		return fmt.Errorf("%s: record x is %s, want f64%s", path, format.Describe(&rec), layout.ShapeString(want))
	}
	got, err := format.ReadAll(f, i, layout.ColMajor, binary.LittleEndian)
	if err != nil {
		return err
	}
	if !bytes.Equal(got, asBytes(s.src)[:s.o.convSize]) {
		return errors.New(path + ": the converted values differ from the source's")
	}
	return nil
}
