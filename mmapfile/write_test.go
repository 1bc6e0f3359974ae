package mmapfile

import (
	"os"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Sync commits metadata only when the size changed since the last Sync
// (or the open); SyncData never does.
func TestSyncSkipsMetadataWhileTheSizeStays(t *testing.T) {
	var calls []string
	oldData, oldAll := syncDataCall, syncAllCall
	syncDataCall = func(f *os.File) error { calls = append(calls, "fdatasync"); return oldData(f) }
	syncAllCall = func(f *os.File) error { calls = append(calls, "fsync"); return oldAll(f) }
	defer func() { syncDataCall, syncAllCall = oldData, oldAll }()

	p, _ := writeFile(t, 4096)
	steps := []struct {
		name string
		do   func(f *File, r *Region) error
		want string
	}{
		{"edit through a view", func(f *File, r *Region) error { r.Bytes()[7] = 1; return f.Sync() }, "fdatasync"},
		{"WriteAt inside the file", func(f *File, r *Region) error { _, err := f.WriteAt([]byte{1}, 9); return checkSync(err, f.Sync) }, "fdatasync"},
		{"Grow", func(f *File, r *Region) error { return checkSync(f.Grow(8192), f.Sync) }, "fsync"},
		{"nothing changed since", func(f *File, r *Region) error { return f.Sync() }, "fdatasync"},
		{"WriteAt past the end", func(f *File, r *Region) error { _, err := f.WriteAt([]byte{1}, 9000); return checkSync(err, f.Sync) }, "fsync"},
		{"another handle truncates", func(f *File, r *Region) error { return checkSync(os.Truncate(p, 8192), f.Sync) }, "fsync"},
		{"SyncData after Truncate", func(f *File, r *Region) error { return checkSync(f.Truncate(4096), f.SyncData) }, "fdatasync"},
		{"Sync after SyncData made the size durable", func(f *File, r *Region) error { return f.Sync() }, "fdatasync"},
		{"Close", func(f *File, r *Region) error { return f.Close() }, "fdatasync"},
	}
	f, err := OpenFile(p, ReadWrite, nil)
	require.NoError(t, err)
	r, err := f.Map(0, 4096)
	require.NoError(t, err)
	for _, s := range steps {
		calls = nil
		require.NoError(t, s.do(f, r), s.name)
		assert.Equal(t, []string{s.want}, calls, s.name)
	}

	// A truncating open has a size to commit.
	f, err = OpenFile(p, ReadWrite, &Options{Truncate: true})
	require.NoError(t, err)
	calls = nil
	require.NoError(t, f.Sync())
	require.NoError(t, f.Close())
	assert.Equal(t, []string{"fsync", "fdatasync"}, calls)
	// A read-only file has nothing to sync.
	ro, err := Open(p)
	require.NoError(t, err)
	calls = nil
	require.NoError(t, ro.Sync())
	require.NoError(t, ro.SyncData())
	require.NoError(t, ro.Close())
	assert.Empty(t, calls)
	assert.ErrorIs(t, ro.SyncData(), ErrClosed)
}

func checkSync(err error, sync func() error) error {
	if err != nil {
		return err
	}
	return sync()
}
