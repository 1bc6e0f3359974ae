package benchmarks

import (
	"io"
	"os"
	"time"

	"github.com/mmapkit/mmapkit/format"
	"github.com/mmapkit/mmapkit/layout"
	"github.com/mmapkit/mmapkit/npy"
	"github.com/mmapkit/mmapkit/refs"
	"github.com/mmapkit/mmapkit/zarr"
)

func init() {
	formatMeasures["refs_time_npy"] = (*suite).refsTimeNpy
	formatMeasures["refs_time_zarr"] = (*suite).refsTimeZarr
}

// refsNpyShape is the 1 GiB .npy the reference figure describes: f64 rows
// of 128 KiB, 16 ranges of 64 MiB.
var refsNpyShape = []int64{8192, 16384}

// refsZarrShape and refsZarrChunks give the store of 10,000 chunks.
var refsZarrShape, refsZarrChunks = []int64{10000, 16}, []int64{1, 16}

// refsTimeNpy is the latency of a reference set of a 1 GiB .npy: open,
// locate, build, encode. The file is sparse: only metadata is read.
func (s *suite) refsTimeNpy() (float64, int64, error) {
	p := s.path("refs.npy")
	f, err := npy.Create(p, npy.Header{DType: npy.DType{Kind: 'f', ItemSize: 8}, Shape: refsNpyShape}, nil)
	if err != nil {
		return 0, 0, err
	}
	if err := f.Close(); err != nil {
		return 0, 0, err
	}
	defer os.Remove(p)
	return s.refsTime(p)
}

// refsTimeZarr is the latency of a reference set of a Zarr v2 store of
// 10,000 chunk files (each one stat).
func (s *suite) refsTimeZarr() (float64, int64, error) {
	p := s.path("refs.zarr")
	n, _ := layout.Count(refsZarrShape)
	src := newMemSource("x", make([]byte, n*8), refsZarrShape, layout.RowMajor)
	if err := zarr.Write(p, src, &zarr.Options{Version: 2, Chunks: refsZarrChunks}); err != nil {
		return 0, 0, err
	}
	defer os.RemoveAll(p)
	return s.refsTime(p)
}

// refsTime is the median latency of building and writing path's reference
// set, and the set's size.
func (s *suite) refsTime(p string) (float64, int64, error) {
	once := func() (int64, error) {
		f, err := format.Open(p, nil)
		if err != nil {
			return 0, err
		}
		defer f.Close()
		set, err := refs.Build(f, p, nil)
		if err != nil {
			return 0, err
		}
		var w countWriter
		err = set.WriteJSON(&w)
		return int64(w), err
	}
	size, err := once() // warm
	if err != nil {
		return 0, 0, err
	}
	us, err := s.median(func(int) (time.Duration, error) {
		return timed(func() error { _, err := once(); return err })
	})
	return us, size, err
}

// countWriter counts the bytes written to it.
type countWriter int64

func (w *countWriter) Write(b []byte) (int, error) {
	*w += countWriter(len(b))
	return len(b), nil
}

var _ io.Writer = (*countWriter)(nil)
