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
	formatMeasures["scidb_fixed_decode"] = func(s *suite) (float64, int64, error) { return s.scidbFixed(false) }
	formatMeasures["scidb_decode_file"] = func(s *suite) (float64, int64, error) { return s.scidbFixed(true) }
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

// scidbFixed decodes a whole file of fixed-size cells into columns: with
// scidb.File.DecodeInto into a reused table (the decoder itself, as
// memmove copies between existing slices; the file is mapped once), or
// with scidb.DecodeFile, which maps the file and allocates the columns
// every time.
func (s *suite) scidbFixed(whole bool) (float64, int64, error) {
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
	var t *scidb.Table
	decode := func() (err error) {
		t, err = scidb.DecodeFile(p, &scidb.Options{Format: format, Lenient: true})
		return err
	}
	if !whole {
		m, err := scidb.Open(p, &scidb.Options{Format: format, Lenient: true})
		if err != nil {
			return 0, 0, err
		}
		defer m.Close()
		if t, err = scidb.NewTable(format, int(cells)); err != nil {
			return 0, 0, err
		}
		decode = func() error {
			_, err := m.DecodeInto(t, 0)
			return err
		}
	}
	if err := decode(); err != nil {
		return 0, 0, err
	}
	if t.Len != int(cells) || len(t.Cols) != 2 {
		return 0, 0, fmt.Errorf("scidb: %d cells of %d attributes, want %d of 2", t.Len, len(t.Cols), cells)
	}
	xs, ok := t.Cols[1].Data.([]float64)
	if !ok {
		return 0, 0, fmt.Errorf("scidb: double column holds %T", t.Cols[1].Data)
	}
	if err := checkSum("scidb_fixed", sumF64(xs), len(xs)); err != nil {
		return 0, 0, err
	}
	n := cells * 16
	d, err := s.best(func() (time.Duration, error) { return timed(decode) })
	if err != nil {
		return 0, 0, err
	}
	return gbps(n, d), n, nil
}
