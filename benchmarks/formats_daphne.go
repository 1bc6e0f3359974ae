package benchmarks

import (
	"os"
	"time"

	"github.com/mmapkit/mmapkit/daphne"
)

func init() {
	formatMeasures["daphne_dense_decode"] = (*suite).daphneDenseDecode
}

// daphneDenseDecode reads a dense f64 matrix, whose values DAPHNE puts at
// byte 45 where no float64 view can alias, with daphne.ReadDense: one
// bulk copy into a new slice (so the figure includes allocating it).
func (s *suite) daphneDenseDecode() (float64, int64, error) {
	p := s.path("dense.dbdf")
	const cols = 8
	rows := uint64(len(s.src)) / cols
	if err := daphne.WriteDense(p, rows, cols, s.src[:rows*cols], nil); err != nil {
		return 0, 0, err
	}
	defer os.Remove(p + ".meta")
	defer os.Remove(p)
	f, err := daphne.Open(p, nil)
	if err != nil {
		return 0, 0, err
	}
	defer f.Close()
	read := func() error {
		xs, err := daphne.ReadDense[float64](f)
		if err != nil {
			return err
		}
		return checkSum("daphne_dense_decode", sumF64(xs), len(xs))
	}
	if err := read(); err != nil { // warm, and check the values
		return 0, 0, err
	}
	n := int64(rows*cols) * 8
	d, err := s.best(func() (time.Duration, error) {
		return timed(func() error { _, err := daphne.ReadDense[float64](f); return err })
	})
	if err != nil {
		return 0, 0, err
	}
	return gbps(n, d), n, nil
}
