package benchmarks

import (
	"encoding/binary"
	"fmt"
	"math"
	"os"
	"time"

	"github.com/mmapkit/mmapkit/scidb"
)

func init() {
	formatMeasures["scidb_fixed_decode"] = (*suite).scidbFixedDecode
}

// scidbFormat is the cells of the SciDB figure: 16 fixed bytes each, no
// nulls.
const scidbFormat = "(int64, double)"

// writeSciDBCells writes n cells of scidbFormat: (i, value(i)).
func writeSciDBCells(path string, n int64) error {
	return writeFile(path, n*16, 16, func(b []byte, first int) {
		for i := 0; i+16 <= len(b); i += 16 {
			k := first + i/16
			binary.LittleEndian.PutUint64(b[i:], uint64(k))
			binary.LittleEndian.PutUint64(b[i+8:], math.Float64bits(value(k)))
		}
	})
}

// scidbFixedDecode decodes a whole file of fixed-size cells into columns
// with scidb.DecodeFile (which maps the file and allocates the columns).
func (s *suite) scidbFixedDecode() (float64, int64, error) {
	format, err := scidb.ParseFormat(scidbFormat)
	if err != nil {
		return 0, 0, err
	}
	p := s.path("cells.scidb")
	cells := s.o.Size / 16
	if err := writeSciDBCells(p, cells); err != nil {
		return 0, 0, err
	}
	defer os.Remove(p)
	decode := func(check bool) error {
		t, err := scidb.DecodeFile(p, format, scidb.ReadOptions{})
		if err != nil || !check {
			return err
		}
		if t.Len != int(cells) || len(t.Cols) != 2 {
			return fmt.Errorf("scidb: %d cells of %d attributes, want %d of 2", t.Len, len(t.Cols), cells)
		}
		xs, ok := t.Cols[1].Data.([]float64)
		if !ok {
			return fmt.Errorf("scidb: double column holds %T", t.Cols[1].Data)
		}
		return checkSum("scidb_fixed_decode", sumF64(xs), len(xs))
	}
	if err := decode(true); err != nil {
		return 0, 0, err
	}
	n := cells * 16
	d, err := s.best(func() (time.Duration, error) {
		return timed(func() error { return decode(false) })
	})
	if err != nil {
		return 0, 0, err
	}
	return gbps(n, d), n, nil
}
