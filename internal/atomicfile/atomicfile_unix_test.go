//go:build unix

package atomicfile

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestWrite(t *testing.T) {
	umask := syscall.Umask(0o022)
	defer syscall.Umask(umask)
	boom := errors.New("boom")
	cases := []struct {
		name     string
		existing *fs.FileMode // nil: no file at the path
		perm     fs.FileMode
		fnErr    error
		wantData string
		wantPerm fs.FileMode
	}{
		{name: "new file, default perm less umask", wantData: "new", wantPerm: 0o644},
		{name: "new file, given perm less umask", perm: 0o666, wantData: "new", wantPerm: 0o644},
		{name: "new private file", perm: 0o600, wantData: "new", wantPerm: 0o600},
		{name: "replace keeps 0600", existing: ptr(0o600), perm: 0o644, wantData: "new", wantPerm: 0o600},
		{name: "replace keeps 0755", existing: ptr(0o755), wantData: "new", wantPerm: 0o755},
		{name: "failed write keeps the old file", existing: ptr(0o640), fnErr: boom, wantData: "old", wantPerm: 0o640},
		{name: "failed write makes no file", fnErr: boom},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			p := filepath.Join(dir, "x.bin")
			if c.existing != nil {
				require.NoError(t, os.WriteFile(p, []byte("old"), 0o600))
				require.NoError(t, os.Chmod(p, *c.existing))
			}
			err := Write(p, c.perm, func(f *os.File) error {
				if _, err := f.WriteString("new"); err != nil {
					return err
				}
				return c.fnErr
			})
			if c.fnErr != nil {
				require.ErrorIs(t, err, c.fnErr)
			} else {
				require.NoError(t, err)
			}
			if c.wantData == "" {
				assert.Empty(t, entries(t, dir))
				return
			}
			assert.Equal(t, []string{"x.bin"}, entries(t, dir), "no temporary file is left")
			got, err := os.ReadFile(p)
			require.NoError(t, err)
			assert.Equal(t, c.wantData, string(got))
			fi, err := os.Stat(p)
			require.NoError(t, err)
			assert.Equal(t, c.wantPerm, fi.Mode().Perm())
		})
	}
}

func ptr(m fs.FileMode) *fs.FileMode { return &m }
