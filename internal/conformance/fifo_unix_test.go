//go:build unix

package conformance

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mmapkit/mmapkit/format"
	"github.com/mmapkit/mmapkit/mmapfile"
)

// A FIFO under a format's name is refused as mmapfile.ErrNotRegular, the
// one sentinel of that condition, both through format.Open and through the
// package's own Open, with an error naming it, and without waiting for a
// writer.
func TestFIFO(t *testing.T) {
	apis := typedAPIs()
	for _, s := range subjects() {
		t.Run(s.format, func(t *testing.T) {
			p := filepath.Join(t.TempDir(), s.file)
			require.NoError(t, syscall.Mkfifo(p, 0o600))
			for how, open := range map[string]func() error{
				"format.Open": func() error {
					f, err := format.Open(p, s.options(nil))
					if err == nil {
						f.Close()
					}
					return err
				},
				"the package's Open": func() error {
					f, err := apis[s.format].open(p)
					if err == nil {
						f.Close()
					}
					return err
				},
			} {
				err := withinSeconds(t, p, open)
				require.ErrorIs(t, err, mmapfile.ErrNotRegular, how)
				assert.Contains(t, err.Error(), p, how)
			}
		})
	}
}

// withinSeconds runs open, failing the test if it waits for a writer of
// the FIFO p (which it then opens, so that open returns).
func withinSeconds(t *testing.T, p string, open func() error) error {
	done := make(chan error, 1)
	go func() { done <- open() }()
	select {
	case err := <-done:
		return err
	case <-time.After(10 * time.Second):
		t.Errorf("opening the FIFO %s waits for a writer", p)
		if w, err := os.OpenFile(p, os.O_WRONLY|syscall.O_NONBLOCK, 0); err == nil {
			w.Close()
		}
		return <-done
	}
}
