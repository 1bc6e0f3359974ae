package futhark

import (
	"encoding/binary"
	"errors"
	"io"
	"path/filepath"
	"sync"
	"testing"

	"github.com/mmapkit/mmapkit/layout"
	"github.com/mmapkit/mmapkit/mmapfile"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// readAll exercises every reading method of f once; it returns the first
// error, which after Close must be ErrClosed.
func readAll(f *File) error {
	if _, err := View[float32](f, 1); err != nil {
		return err
	}
	if _, err := Read[int32](f, 0); err != nil {
		return err
	}
	if err := ReadAt(f, 1, 2, make([]float32, 3)); err != nil {
		return err
	}
	if _, err := f.Value(2); err != nil {
		return err
	}
	if _, err := f.PayloadBytes(1); err != nil {
		return err
	}
	if err := f.ReadArray(1, make([]byte, 16), 0, layout.ColMajor, binary.BigEndian); err != nil {
		return err
	}
	if err := f.Encode(NewEncoder(io.Discard), 1, false); err != nil {
		return err
	}
	f.Entries()
	f.Records()
	f.NumRecords()
	return nil
}

func concurrencyFile(t *testing.T) string {
	p := filepath.Join(t.TempDir(), "c.data")
	require.NoError(t, WriteFile(p, &Options{Align: AlignElement}, func(e *Encoder) error {
		if err := e.EncodeText(mustValue(t, []int64{3}, []int32{1, 2, 3})); err != nil {
			return err
		}
		if err := e.EncodeBinary(mustValue(t, []int64{4, 4}, []float32{0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15})); err != nil {
			return err
		}
		return e.EncodeText(mustValue(t, []int64{2}, []bool{true, false}))
	}))
	return p
}

// The methods of a File are safe for concurrent use, Close included: run
// with -race. Readers racing with Close get their data or ErrClosed, never
// a crash or a torn state.
func TestConcurrentReadersAndClose(t *testing.T) {
	p := concurrencyFile(t)
	for round := 0; round < 20; round++ {
		f, err := Open(p, nil)
		require.NoError(t, err)
		var wg sync.WaitGroup
		errs := make(chan error, 8)
		start := make(chan struct{})
		for g := 0; g < 4; g++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				<-start
				for {
					if err := readAll(f); err != nil {
						errs <- err
						return
					}
				}
			}()
		}
		close(start)
		require.NoError(t, f.Close())
		wg.Wait()
		close(errs)
		for err := range errs {
			assert.ErrorIs(t, err, mmapfile.ErrClosed)
			assert.ErrorContains(t, err, p, "the error names the file")
		}
		assert.ErrorIs(t, f.Close(), mmapfile.ErrClosed)
	}
}

// Appends wait for the reads under way, and readers see the values there
// were before or after an append, never a half-indexed file.
func TestConcurrentReadersAndAppends(t *testing.T) {
	p := concurrencyFile(t)
	f, err := OpenFile(p, mmapfile.ReadWrite, nil)
	require.NoError(t, err)
	defer f.Close()
	var wg sync.WaitGroup
	stop := make(chan struct{})
	for g := 0; g < 3; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				select {
				case <-stop:
					return
				default:
				}
				n := f.NumRecords()
				recs := f.Records()
				if !assert.GreaterOrEqual(t, len(recs), 3) {
					return
				}
				v, err := f.Value(n - 1)
				if !assert.NoError(t, err) {
					return
				}
				if n > 3 {
					assert.Equal(t, []byte{byte(n - 4)}, v.Data)
				}
				buf := make([]byte, 64)
				assert.NoError(t, f.ReadArray(1, buf, 0, layout.RowMajor, binary.LittleEndian))
			}
		}()
	}
	for k := 0; k < 50; k++ {
		require.NoError(t, f.Append(mustValue(t, nil, []uint8{uint8(k)})))
	}
	close(stop)
	wg.Wait()
	assert.Equal(t, 53, f.NumRecords())
}

// A File made by NewReader closes as one that maps a file does.
func TestNewReaderClose(t *testing.T) {
	f, err := newReader([]byte("1 2"), nil)
	require.NoError(t, err)
	require.NoError(t, f.Close())
	_, err = f.Value(0)
	assert.ErrorIs(t, err, mmapfile.ErrClosed)
	assert.ErrorIs(t, f.Close(), mmapfile.ErrClosed)
	assert.True(t, errors.Is(f.Sync(), mmapfile.ErrClosed))
}
