package daphne

import (
	"path/filepath"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestConcurrentWritesOntoOneTarget: writers racing onto one path leave
// a data file and a .meta from the same writer, every round (one strict
// Open refuses a .meta that disagrees with its data).
func TestConcurrentWritesOntoOneTarget(t *testing.T) {
	path := filepath.Join(t.TempDir(), "m.dbdf")
	shapes := []struct{ rows, cols uint64 }{{500, 4}, {1000, 4}, {3, 7}}
	for round := range 40 {
		var wg sync.WaitGroup
		errs := make([]error, len(shapes))
		for w, s := range shapes {
			wg.Add(1)
			go func() {
				defer wg.Done()
				errs[w] = WriteDense(path, s.rows, s.cols, make([]float64, s.rows*s.cols), nil)
			}()
		}
		wg.Wait()
		for _, err := range errs {
			require.NoError(t, err)
		}
		f, err := Open(path, nil)
		require.NoError(t, err, "round %d", round)
		require.NoError(t, f.Close())
	}
}
