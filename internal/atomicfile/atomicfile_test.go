package atomicfile

import (
	"io/fs"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func entries(t *testing.T, dir string) []string {
	t.Helper()
	des, err := os.ReadDir(dir)
	require.NoError(t, err)
	var names []string
	for _, de := range des {
		names = append(names, de.Name())
	}
	return names
}

func TestCommitAndAbort(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "y")
	f, err := Create(p, 0)
	require.NoError(t, err)
	assert.Equal(t, p, f.Target())
	_, err = f.WriteString("data")
	require.NoError(t, err)
	_, err = os.Stat(p)
	require.ErrorIs(t, err, fs.ErrNotExist, "nothing at the target before Commit")
	require.NoError(t, f.Commit())
	f.Abort() // no effect after Commit
	require.Error(t, f.Commit(), "a second Commit is an error")
	got, err := os.ReadFile(p)
	require.NoError(t, err)
	assert.Equal(t, "data", string(got))

	g, err := Create(p, 0)
	require.NoError(t, err)
	_, err = g.WriteString("other")
	require.NoError(t, err)
	g.Abort()
	got, err = os.ReadFile(p)
	require.NoError(t, err)
	assert.Equal(t, "data", string(got))
	assert.Equal(t, []string{"y"}, entries(t, dir))

	_, err = Create(filepath.Join(dir, "missing", "z"), 0)
	require.ErrorIs(t, err, fs.ErrNotExist)
}
