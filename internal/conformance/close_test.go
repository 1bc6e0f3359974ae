package conformance

import (
	"bytes"
	"encoding/binary"
	"errors"
	"slices"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/mmapkit/mmapkit/format"
	"github.com/mmapkit/mmapkit/layout"
	"github.com/mmapkit/mmapkit/mmapfile"
)

// scaled is src with each record's values repeated n times along its
// first axis: a file large enough that a copying read is still running
// when another goroutine closes the file.
func scaled(src *memSource, n int) *memSource {
	out := &memSource{}
	for i, r := range src.Records() {
		r.Shape = slices.Clone(r.Shape)
		r.Shape[0] *= int64(n)
		r.Size *= int64(n)
		out.Add(r, bytes.Repeat(src.Data(i), n))
	}
	return out
}

// Close while goroutines copy the same file: every read gives the
// file's values or an error wrapping ErrClosed, never a crash, and the
// race detector sees no race.
func TestCloseWhileReading(t *testing.T) {
	for _, s := range subjects() {
		t.Run(s.format, func(t *testing.T) {
			var path string
			var want []byte
			if s.src == nil {
				// A reference file of a format this project does not
				// write: its record 0 as it is.
				path = s.write(t, t.TempDir(), nil)
				f, err := format.Open(path, s.options(nil))
				require.NoError(t, err)
				want, err = format.ReadAll(f, 0, layout.RowMajor, binary.LittleEndian)
				require.NoError(t, err)
				require.NoError(t, f.Close())
			} else {
				src := scaled(s.src, 5000)
				path = s.write(t, t.TempDir(), src)
				want = src.Data(0)
			}
			const readers = 4
			for round := range 10 {
				f, err := format.Open(path, s.options(nil))
				require.NoError(t, err)
				var started, done sync.WaitGroup
				errs := make(chan error, readers)
				for range readers {
					started.Add(1)
					done.Add(1)
					go func() {
						defer done.Done()
						buf := make([]byte, len(want))
						for k := 0; ; k++ {
							err := f.ReadArray(0, buf, 0, layout.RowMajor, binary.LittleEndian)
							if k == 0 {
								started.Done()
							}
							if err != nil {
								if !errors.Is(err, mmapfile.ErrClosed) {
									errs <- err
								}
								return
							}
							if !bytes.Equal(buf, want) {
								errs <- errors.New("a read before Close gave other values than the file's")
								return
							}
						}
					}()
				}
				started.Wait()
				require.NoError(t, f.Close(), "round %d", round)
				done.Wait()
				close(errs)
				for err := range errs {
					t.Fatalf("round %d: %v", round, err)
				}
			}
		})
	}
}
