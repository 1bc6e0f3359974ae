//go:build linux

package reliability

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mmapkit/mmapkit/internal/atomicfile"
	"github.com/mmapkit/mmapkit/mmapfile"
)

// A whole-file writer (a conversion) must not rename a new file over one
// that another process has open read-write: that process's later edit
// would go to the old file, which no path names any more — silently lost.
// The child opens the file read-write (mmapfile's exclusive lock), says
// "held", waits for a line on stdin, edits the file through its mapping,
// syncs and closes. The replacement attempted meanwhile fails with
// ErrLocked, and the edit is in the file at the path afterwards.

func init() {
	children["hold-rw-then-edit"] = func(path string, _ int64) error {
		f, err := mmapfile.OpenFile(path, mmapfile.ReadWrite, nil)
		if err != nil {
			return err
		}
		r, err := f.MapAll()
		if err != nil {
			return err
		}
		fmt.Println("held")
		if _, err := bufio.NewReader(os.Stdin).ReadString('\n'); err != nil {
			return err
		}
		copy(r.Bytes(), "EDITED")
		if err := f.Close(); err != nil {
			return err
		}
		fmt.Println("edited")
		return nil
	}
}

func TestReplaceRefusesAFileHeldForWriting(t *testing.T) {
	p := filepath.Join(t.TempDir(), "x.bin")
	require.NoError(t, os.WriteFile(p, []byte("ORIGIN contents"), 0o644))

	cmd := childCommand("hold-rw-then-edit", p, 0)
	stdin, err := cmd.StdinPipe()
	require.NoError(t, err)
	stdout, err := cmd.StdoutPipe()
	require.NoError(t, err)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	require.NoError(t, cmd.Start())
	lines := bufio.NewReader(stdout)
	line, err := lines.ReadString('\n')
	require.NoError(t, err, stderr.String())
	require.Equal(t, "held\n", line)

	err = atomicfile.Write(p, 0, func(f *os.File) error {
		_, err := f.WriteString("converted contents")
		return err
	})
	require.ErrorIs(t, err, mmapfile.ErrLocked)
	assert.Contains(t, err.Error(), p)

	_, err = fmt.Fprintln(stdin, "go on")
	require.NoError(t, err)
	line, err = lines.ReadString('\n')
	require.NoError(t, err, stderr.String())
	require.Equal(t, "edited\n", line)
	require.NoError(t, cmd.Wait(), stderr.String())
	got, err := os.ReadFile(p)
	require.NoError(t, err)
	assert.Equal(t, "EDITED contents", string(got), "the holder's edit reached the file at the path")
	left, err := atomicfile.Leftovers(filepath.Dir(p))
	require.NoError(t, err)
	assert.Empty(t, left)

	// Once the holder is gone the replacement goes through.
	require.NoError(t, atomicfile.Write(p, 0, func(f *os.File) error {
		_, err := f.WriteString("converted contents")
		return err
	}))
	got, err = os.ReadFile(p)
	require.NoError(t, err)
	assert.Equal(t, "converted contents", string(got))
}
