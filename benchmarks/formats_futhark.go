package benchmarks

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"math"
	"os"
	"time"

	"github.com/mmapkit/mmapkit/futhark"
	"github.com/mmapkit/mmapkit/layout"
)

func init() {
	formatMeasures["futhark_view_scan_f32"] = (*suite).futharkViewScan
	formatMeasures["futhark_unaligned_decode"] = (*suite).futharkUnalignedDecode
	formatMeasures["futhark_text_parse"] = (*suite).futharkTextParse
	formatMeasures["futhark_text_print"] = (*suite).futharkTextPrint
}

// writeFutharkArray writes one binary Futhark array of n elements of t
// (f32 or f64, element i being value(i)), streamed in chunks, with the
// given alignment.
func writeFutharkArray(path string, t layout.Type, n int64, align int) (err error) {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	defer func() {
		if cerr := f.Close(); err == nil {
			err = cerr
		}
	}()
	enc := futhark.NewWriter(f, 0, &futhark.Options{Align: align})
	if err := enc.BeginBinary(t, []int64{n}); err != nil {
		return err
	}
	size := int64(t.Size())
	buf := make([]byte, 1<<20)
	for first := int64(0); first < n; {
		k := min(int64(len(buf))/size, n-first)
		b := buf[:k*size]
		for i := range k {
			x := value(int(first + i))
			if t == layout.F32 {
				binary.LittleEndian.PutUint32(b[i*4:], math.Float32bits(float32(x)))
			} else {
				binary.LittleEndian.PutUint64(b[i*8:], math.Float64bits(x))
			}
		}
		if err := enc.WriteElems(b); err != nil {
			return err
		}
		first += k
	}
	if err := enc.Flush(); err != nil {
		return err
	}
	return f.Sync()
}

// scanFutharkF32 opens a Futhark file, views its first value as
// []float32 and sums it.
func scanFutharkF32(path string) (float64, int, error) {
	f, err := futhark.Open(path, nil)
	if err != nil {
		return 0, 0, err
	}
	xs, err := futhark.View[float32](f, 0)
	if err != nil {
		f.Close()
		return 0, 0, err
	}
	s := sumF32(xs)
	return s, len(xs), f.Close()
}

func (s *suite) futharkViewScan() (float64, int64, error) {
	p := s.path("aligned.fut")
	if err := writeFutharkArray(p, layout.F32, s.o.Size/4, futhark.Align64); err != nil {
		return 0, 0, err
	}
	defer os.Remove(p)
	return s.scanPaired("futhark_view_scan_f32", scanFutharkF32, p, 4, &s.res.Ceilings.MmapScanF32, "mmap_scan_f32", scanRawMappingF32, s.f32)
}

// futharkUnalignedDecode copies an f64 array whose payload starts at an
// odd offset (futhark-data's own layout) into a reused []float64 with
// futhark.ReadAt.
func (s *suite) futharkUnalignedDecode() (float64, int64, error) {
	p := s.path("unaligned.fut")
	n := s.o.Size / 8
	if err := writeFutharkArray(p, layout.F64, n, futhark.AlignNone); err != nil {
		return 0, 0, err
	}
	defer os.Remove(p)
	f, err := futhark.Open(p, nil)
	if err != nil {
		return 0, 0, err
	}
	defer f.Close()
	if _, err := futhark.View[float64](f, 0); err == nil {
		return 0, 0, fmt.Errorf("%s: payload is aligned; the figure needs an unaligned one", p)
	}
	dst := make([]float64, n)
	read := func() error { return futhark.ReadAt(f, 0, 0, dst) }
	if err := read(); err != nil { // warm, and check the values once
		return 0, 0, err
	}
	if err := checkSum("futhark_unaligned_decode", sumF64(dst), len(dst)); err != nil {
		return 0, 0, err
	}
	d, err := s.best(func() (time.Duration, error) { return timed(read) })
	if err != nil {
		return 0, 0, err
	}
	return gbps(n*8, d), n * 8, nil
}

// futharkTextParse parses the text the strconv_parse baseline parses,
// with futhark.NewReader + futhark.Read.
func (s *suite) futharkTextParse() (float64, int64, error) {
	xs := s.textValues()
	text := appendFutharkText(nil, xs)
	d, err := s.best(func() (time.Duration, error) {
		var got []float64
		d, err := timed(func() error {
			f, err := futhark.NewReader(bytes.NewReader(text), int64(len(text)), nil)
			if err != nil {
				return err
			}
			got, err = futhark.Read[float64](f, 0)
			return err
		})
		if err == nil && (len(got) != len(xs) || got[len(got)-1] != xs[len(xs)-1]) {
			err = fmt.Errorf("futhark text parse: got %d values, want %d", len(got), len(xs))
		}
		return d, err
	})
	if err != nil {
		return 0, 0, err
	}
	return float64(len(text)) / d.Seconds() / 1e6, int64(len(text)), nil
}

// futharkTextPrint prints the same values as Futhark text with
// futhark.Encoder.EncodeText into a reused buffer.
func (s *suite) futharkTextPrint() (float64, int64, error) {
	xs := s.textValues()
	v, err := futhark.NewValue([]int64{int64(len(xs))}, xs)
	if err != nil {
		return 0, 0, err
	}
	var buf bytes.Buffer
	print := func() error {
		buf.Reset()
		enc := futhark.NewEncoder(&buf)
		if err := enc.EncodeText(v); err != nil {
			return err
		}
		return enc.Flush()
	}
	if err := print(); err != nil {
		return 0, 0, err
	}
	d, err := s.best(func() (time.Duration, error) { return timed(print) })
	if err != nil {
		return 0, 0, err
	}
	n := int64(buf.Len())
	return float64(n) / d.Seconds() / 1e6, n, nil
}
