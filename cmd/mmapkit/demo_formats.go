package main

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"runtime/debug"
	"time"

	"github.com/mmapkit/mmapkit/benchmarks"
	"github.com/mmapkit/mmapkit/format"
	"github.com/mmapkit/mmapkit/layout"
	"github.com/mmapkit/mmapkit/mmapfile"
)

func init() { demoSteps = append(demoSteps, demoFormats) }

// demoFormats tells the story through the formats: write an ABF file, map
// and scan its array, edit it in place, convert it to every other array
// format and back, and check that the values survived.
func demoFormats(d *demo) error {
	if _, ok := format.Lookup("abf"); !ok {
		d.say("the ABF format is not in this build: no format steps")
		return nil
	}
	path := filepath.Join(d.dir, "demo.abf")
	n := d.bytes / 8
	rows := int64(1024)
	for n%rows != 0 {
		rows /= 2
	}
	cols := n / rows
	dims := []int64{rows, cols}

	// Write: Julia's x = reshape(0.5 .* (0:n-1), rows, cols), column-major.
	t0 := time.Now()
	data := make([]float64, n)
	for i := range data {
		data[i] = float64(i) * 0.5
	}
	raw := make([]byte, 8*n)
	for i, v := range data {
		binary.LittleEndian.PutUint64(raw[8*i:], math.Float64bits(v))
	}
	data = nil
	src := format.Memory([]format.Record{{Array: layout.Array{Name: "x", Type: layout.F64, Shape: dims, Order: layout.ColMajor, Offset: -1, Size: 8 * n}}}, [][]byte{raw})
	if err := format.Write(path, src, &format.Options{Format: "abf"}); err != nil {
		return err
	}
	raw = nil
	dur := time.Since(t0)
	size := fileSize(path)
	d.say("wrote %s: ABF (AlignedBinaryFormat.jl v0.7, Format C), key \"x\", Array{Float64,2} of %d×%d (%s file) in %.2f s, %.2f GB/s",
		path, rows, cols, benchmarks.HumanSize(size), dur.Seconds(), gbps(d.bytes, dur))

	// Open and scan: the record's payload is aligned and little-endian, so
	// format.View on the file that format.Open detected is a []float64
	// view of its mapping.
	t0 = time.Now()
	f, err := format.Open(path, &format.Options{Options: mmapfile.Options{Advice: mmapfile.AdviceSequential}})
	if err != nil {
		return err
	}
	xs, err := format.View[float64](f, 0)
	if err != nil {
		f.Close()
		return err
	}
	sum := sumF64(xs)
	dur = time.Since(t0)
	off := f.Records()[0].Offset
	if err := f.Close(); err != nil {
		return err
	}
	want := 0.5 * float64(n) * float64(n-1) / 2
	d.say("opened it read-only (payload at offset %d, aligned: zero copy) and summed format.View's []float64, a view of the mapping: sum = %.6g (expected %.6g), %.3f s, %.2f GB/s",
		off, sum, want, dur.Seconds(), gbps(d.bytes, dur))
	if sum != want {
		return fmt.Errorf("ABF scan: sum %v, want %v", sum, want)
	}

	// Edit in place: Julia x[3, 2] = -1, i.e. logical [2,1].
	before, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	if err := setElement(&readFlags{}, path, "x", []int64{2, 1}, "-1"); err != nil {
		return err
	}
	after, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	changed := diffBytes(before, after)
	before = nil
	elemOff := off + 8*(2+rows)
	d.say("mmapkit set %s x [2,1] -1: Julia's x[3,2] changed in place; %d bytes of the file differ, all in the element at offset %d = %d + 8·(2 + %d·1)",
		filepath.Base(path), len(changed), elemOff, off, rows)
	for _, c := range changed {
		if c < elemOff || c >= elemOff+8 {
			return fmt.Errorf("set changed byte %d, outside the element at %d", c, elemOff)
		}
	}
	f, err = format.Open(path, nil)
	if err != nil {
		return err
	}
	got := make([]byte, 24)
	err = f.ReadArray(0, got, rows+1, layout.ColMajor, binary.LittleEndian)
	f.Close()
	if err != nil {
		return err
	}
	vals := []float64{f64At(got, 0), f64At(got, 1), f64At(got, 2)}
	d.detail("reopened: x[2:4, 2] = %v", vals)
	if vals[1] != -1 {
		return fmt.Errorf("edit not visible after reopen: %v", vals)
	}

	// Convert to every other array format and back.
	type step struct {
		in, out, to string
		params      map[string]string
		what        string
	}
	var steps []step
	for _, c := range []struct {
		ext, name string
		params    map[string]string
		what      string
	}{
		{".in", "futhark", map[string]string{"aligned": "elem"}, "Futhark binary, aligned (row-major: Julia's x[i,j] is x[i-1][j-1])"},
		{".dbdf", "daphne", nil, "DAPHNE dense matrix (.dbdf + .meta)"},
		{".npy", "npy", nil, "NumPy .npy, Fortran order (no transpose)"},
		{".zarr", "zarr", nil, "Zarr v3 store, uncompressed chunks (mappable), transpose codec"},
	} {
		if _, ok := format.Lookup(c.name); !ok {
			continue
		}
		steps = append(steps,
			step{"demo.abf", "demo" + c.ext, c.name, c.params, c.what},
			step{"demo" + c.ext, "from-" + c.name + ".abf", "abf", nil, "ABF again"})
	}
	// The arrays built above are garbage now: give their memory back
	// before the conversions, which need the page cache.
	debug.FreeOSMemory()
	// The reference for each conversion: the same bytes copied by the
	// kernel and synced (`cp demo.abf copy.abf && sync copy.abf`), timed
	// beside it. A disk's pace changes from one moment to the next (a
	// virtual disk's by several times), so each is timed twice, each
	// conversion right after a copy, and the better of each is shown.
	copySync := func() (time.Duration, error) {
		cp := filepath.Join(d.dir, "copy.abf")
		t := time.Now()
		if err := benchmarks.CopySync(path, cp); err != nil {
			return 0, err
		}
		dur := time.Since(t)
		return dur, os.Remove(cp)
	}
	d.say("each conversion below is timed with its fsync, beside cp demo.abf copy.abf && sync (%s); each is timed twice, the better time shown", benchmarks.HumanSize(size))
	for _, s := range steps {
		in, out := filepath.Join(d.dir, s.in), filepath.Join(d.dir, s.out)
		var rename []string
		if s.to == "abf" {
			rename = []string{"x"}
		}
		var cpDur, dur time.Duration
		for range 2 {
			c, err := copySync()
			if err != nil {
				return err
			}
			t := time.Now()
			if err := convertFile(d.e, d.e.stdout, in, out, &format.Options{}, &format.Options{Format: s.to, Params: s.params}, nil, rename); err != nil {
				return err
			}
			cv := time.Since(t)
			if cpDur == 0 || c < cpDur {
				cpDur = c
			}
			if dur == 0 || cv < dur {
				dur = cv
			}
		}
		d.say("mmapkit convert %s %s: %s, %s in %.2f s (%.2f GB/s of values; cp + sync %.2f s: %.2f× its speed)", s.in, s.out, s.what, benchmarks.HumanSize(fileSize(out)), dur.Seconds(), gbps(d.bytes, dur), cpDur.Seconds(), cpDur.Seconds()/dur.Seconds())
		if s.to == "abf" {
			same, err := sameBytes(out, path)
			if err != nil {
				return err
			}
			if !same {
				return fmt.Errorf("%s differs from %s after the round trip", s.out, "demo.abf")
			}
			d.detail("byte-identical to demo.abf: every value and the edit survived the round trip")
		}
	}
	return nil
}

func f64At(b []byte, i int) float64 {
	return math.Float64frombits(binary.LittleEndian.Uint64(b[8*i:]))
}

func fileSize(path string) int64 {
	st, err := os.Stat(path)
	if err != nil {
		return -1
	}
	if st.IsDir() {
		var n int64
		filepath.Walk(path, func(_ string, fi os.FileInfo, err error) error {
			if err == nil && !fi.IsDir() {
				n += fi.Size()
			}
			return nil
		})
		return n
	}
	return st.Size()
}

// sameBytes reports whether the files a and b hold the same bytes, read a
// piece at a time.
func sameBytes(a, b string) (bool, error) {
	fa, err := os.Open(a)
	if err != nil {
		return false, err
	}
	defer fa.Close()
	fb, err := os.Open(b)
	if err != nil {
		return false, err
	}
	defer fb.Close()
	ba, bb := make([]byte, 1<<20), make([]byte, 1<<20)
	for {
		na, ea := io.ReadFull(fa, ba)
		nb, eb := io.ReadFull(fb, bb)
		if na != nb || !bytes.Equal(ba[:na], bb[:nb]) {
			return false, nil
		}
		if ea == io.EOF || ea == io.ErrUnexpectedEOF {
			return eb == ea, nil
		}
		if ea != nil {
			return false, ea
		}
		if eb != nil {
			return false, eb
		}
	}
}

// diffBytes lists the offsets where a and b differ.
func diffBytes(a, b []byte) []int64 {
	var out []int64
	for i := 0; i < max(len(a), len(b)); i++ {
		if i >= len(a) || i >= len(b) || a[i] != b[i] {
			out = append(out, int64(i))
		}
	}
	return out
}
