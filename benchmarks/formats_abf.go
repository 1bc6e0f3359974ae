package benchmarks

import (
	"fmt"
	"io"
	"os"
	"time"

	"github.com/mmapkit/mmapkit/abf"
	"github.com/mmapkit/mmapkit/format"
	"github.com/mmapkit/mmapkit/layout"
	"github.com/mmapkit/mmapkit/mmapfile"
)

func init() {
	formatMeasures["abf_view_scan_f64"] = (*suite).abfViewScan
	formatMeasures["abf_stream_write"] = (*suite).abfWrite
	formatMeasures["abf_create_fill_view"] = (*suite).abfCreateFill
	formatMeasures["abf_edit_sync"] = (*suite).abfEditSync
	formatMeasures["abf_open_1"] = func(s *suite) (float64, int64, error) { return s.abfOpenAt(0) }
	formatMeasures["abf_open_1000"] = func(s *suite) (float64, int64, error) { return s.abfOpenAt(1) }
	formatMeasures["abf_open_100000"] = func(s *suite) (float64, int64, error) { return s.abfOpenAt(2) }
	formatMeasures["abf_open_per_record"] = (*suite).abfOpenPerRecord
}

// abfKey is the key of the array in the suite's ABF files.
const abfKey = "x"

// writeABF creates an ABF file holding xs as one f64 vector.
func writeABF(path string, xs []float64) error {
	f, err := abf.OpenFile(path, mmapfile.ReadWrite, &abf.Options{Mode: "w"})
	if err != nil {
		return err
	}
	if err := abf.Write(f, abfKey, []int64{int64(len(xs))}, xs); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// scanABF opens an ABF file, views its f64 array and sums it.
func scanABF(path string) (float64, int, error) {
	f, err := abf.Open(path, nil)
	if err != nil {
		return 0, 0, err
	}
	xs, err := abf.View[float64](f, abfKey)
	if err != nil {
		f.Close()
		return 0, 0, err
	}
	s := sumF64(xs)
	return s, len(xs), f.Close()
}

func (s *suite) abfViewScan() (float64, int64, error) {
	p := s.path("data.abf")
	if err := writeABF(p, s.src); err != nil {
		return 0, 0, err
	}
	if err := settle(p); err != nil {
		return 0, 0, err
	}
	defer os.Remove(p)
	return s.scanGBps("abf_view_scan_f64", scanABF, p, 8, nil)
}

// abfWrite creates an ABF file of the suite's data with the streaming
// writer (File.WriteStream, fed in chunks of format.StreamBytes, as a
// conversion feeds it) and closes it, which fsyncs.
func (s *suite) abfWrite() (float64, int64, error) {
	b := asBytes(s.src)
	return s.writeRate("write.abf", int64(len(b)), func(p string) error {
		f, err := abf.OpenFile(p, mmapfile.ReadWrite, &abf.Options{Mode: "w"})
		if err != nil {
			return err
		}
		err = f.WriteStream(abfKey, layout.F64, []int64{int64(len(s.src))}, func(w io.Writer) error {
			for off := 0; off < len(b); off += format.StreamBytes {
				if _, err := w.Write(b[off:min(off+format.StreamBytes, len(b))]); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			f.Close()
			return err
		}
		return f.Close()
	})
}

// abfCreateFill creates an ABF file with abf.Create, fills the view it
// returns and closes the file, which syncs.
func (s *suite) abfCreateFill() (float64, int64, error) {
	return s.writeRate("write.abf", int64(len(s.src))*8, func(p string) error {
		f, err := abf.OpenFile(p, mmapfile.ReadWrite, &abf.Options{Mode: "w+"})
		if err != nil {
			return err
		}
		xs, err := abf.Create[float64](f, abfKey, []int64{int64(len(s.src))})
		if err != nil {
			f.Close()
			return err
		}
		copy(xs, s.src)
		return f.Close()
	})
}

// abfEditSync changes one element of an ABF file with abf.Set and makes
// it durable with File.Sync, each repetition at another random element,
// beside pwrite + fdatasync.
func (s *suite) abfEditSync() (float64, int64, error) {
	p := s.path("edit.abf")
	if err := writeABF(p, s.src); err != nil {
		return 0, 0, err
	}
	defer os.Remove(p)
	f, err := abf.OpenFile(p, mmapfile.ReadWrite, &abf.Options{Mode: "r+"})
	if err != nil {
		return 0, 0, err
	}
	defer f.Close()
	idx := randomIndexes(s.o.latReps, s.elems())
	set := func(k int, v float64) error {
		if err := abf.Set(f, abfKey, []int64{int64(idx[k])}, v); err != nil {
			return err
		}
		return f.Sync()
	}
	us, err := s.editPaired(func(k int) error { return set(k, value(idx[k])+1) }, func(k int) error { return set(k, value(idx[k])) })
	return us, 8, err
}

// writeABFRecords creates an ABF file of n one-element f64 arrays.
func writeABFRecords(path string, n int) error {
	f, err := abf.OpenFile(path, mmapfile.ReadWrite, &abf.Options{Mode: "w"})
	if err != nil {
		return err
	}
	one := []float64{0.25}
	for i := range n {
		if err := abf.Write(f, fmt.Sprintf("r%06d", i), []int64{1}, one); err != nil {
			f.Close()
			return err
		}
	}
	return f.Close()
}

// openABF opens an ABF file, lists it and closes it: what `mmapkit ls`
// does.
func openABF(path string, want int) error {
	f, err := abf.Open(path, nil)
	if err != nil {
		return err
	}
	if got := len(f.Entries()); got != want {
		f.Close()
		return fmt.Errorf("%s: %d records, want %d", path, got, want)
	}
	return f.Close()
}

// abfOpenAt measures the median open latency of a file of the k-th
// record count.
func (s *suite) abfOpenAt(k int) (float64, int64, error) {
	if k >= len(s.o.records) {
		return 0, 0, &notMeasured{"record count not configured"}
	}
	n := s.o.records[k]
	p := s.path(fmt.Sprintf("records-%d.abf", n))
	if err := writeABFRecords(p, n); err != nil {
		return 0, 0, err
	}
	defer os.Remove(p)
	if err := openABF(p, n); err != nil { // warm
		return 0, 0, err
	}
	us, err := s.median(func(int) (time.Duration, error) {
		return timed(func() error { return openABF(p, n) })
	})
	if err != nil {
		return 0, 0, err
	}
	if s.abfOpen == nil {
		s.abfOpen = map[int]float64{}
	}
	s.abfOpen[n] = us
	fi, err := os.Stat(p)
	if err != nil {
		return 0, 0, err
	}
	return us, fi.Size(), nil
}

// abfOpenPerRecord is the slope of the open latency from the smallest to
// the largest record count.
func (s *suite) abfOpenPerRecord() (float64, int64, error) {
	rs := s.o.records
	lo, hi := rs[0], rs[len(rs)-1]
	tlo, okLo := s.abfOpen[lo]
	thi, okHi := s.abfOpen[hi]
	if !okLo || !okHi || hi <= lo {
		return 0, 0, &notMeasured{"the abf_open figures were not measured"}
	}
	return (thi - tlo) / float64(hi-lo), 0, nil
}
