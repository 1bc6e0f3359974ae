package benchmarks

import (
	"os"
	"time"

	"github.com/mmapkit/mmapkit/daphne"
)

func init() {
	formatMeasures["daphne_dense_decode"] = func(s *suite) (float64, int64, error) { return s.daphneDense(false) }
	formatMeasures["daphne_dense_read"] = func(s *suite) (float64, int64, error) { return s.daphneDense(true) }
}

// daphneDense reads a dense f64 matrix, whose values DAPHNE puts at byte 45
// where no float64 view can alias: with daphne.CopyDenseRange into a
// reused slice (the decoder itself, as memmove copies between existing
// slices), or with daphne.Read, which also allocates its result.
func (s *suite) daphneDense(allocate bool) (float64, int64, error) {
	p := s.path("dense.dbdf")
	const cols = 8
	rows := uint64(len(s.src)) / cols
	if err := daphne.WriteDense(p, rows, cols, s.src[:rows*cols], nil); err != nil {
		return 0, 0, err
	}
	if err := settle(p); err != nil {
		return 0, 0, err
	}
	defer os.Remove(p + ".meta")
	defer os.Remove(p)
	f, err := daphne.Open(p, nil)
	if err != nil {
		return 0, 0, err
	}
	defer f.Close()
	var dst []float64
	if !allocate {
		dst = make([]float64, rows*cols)
	}
	read := func() (err error) {
		if allocate {
			dst, err = daphne.Read[float64](f, "matrix")
			return err
		}
		return daphne.CopyDenseRange(f, dst, 0, rows, 0, cols)
	}
	if err := read(); err != nil { // warm, and check the values
		return 0, 0, err
	}
	if err := checkSum("daphne_dense", sumF64(dst), len(dst)); err != nil {
		return 0, 0, err
	}
	n := int64(rows*cols) * 8
	d, err := s.best(func() (time.Duration, error) { return timed(read) })
	if err != nil {
		return 0, 0, err
	}
	return gbps(n, d), n, nil
}
