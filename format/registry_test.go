package format

import (
	"errors"
	"io"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/mmapkit/mmapkit/mmapfile"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// handed records what the test format's Open was given.
var handed struct {
	file *os.File
	mode mmapfile.Mode
	fail bool
}

func init() {
	Register(Format{
		Name:       "handed",
		Extensions: []string{".handed"},
		Sniff:      func(head []byte) bool { return string(head) == "HANDED" },
		Open: func(path string, mode mmapfile.Mode, o *Options) (File, error) {
			handed.file, handed.mode = o.Options.File, mode
			if handed.fail {
				return nil, errors.New("refused")
			}
			mf, err := mmapfile.OpenFile(path, mode, &o.Options)
			if err != nil {
				return nil, err
			}
			return &handedFile{mf: mf}, nil
		},
	})
}

func init() {
	// A format whose mark lies at byte 1000, past what Sniff is shown.
	Register(Format{
		Name: "probed",
		Probe: func(r io.ReaderAt, size int64) bool {
			b := make([]byte, 6)
			n, _ := r.ReadAt(b, 1000)
			return n == 6 && string(b) == "PROBED"
		},
		Open: func(path string, mode mmapfile.Mode, o *Options) (File, error) {
			return nil, errors.New("not opened here")
		},
	})
}

// A format's Probe reads past the sniffed head.
func TestDetectProbes(t *testing.T) {
	dir := t.TempDir()
	for _, c := range []struct {
		name string
		b    []byte
		want string
	}{
		{"probed.bin", append(make([]byte, 1000), "PROBED"...), "probed"},
		{"short.bin", append(make([]byte, 999), "PROBED"...), ""},
	} {
		path := filepath.Join(dir, c.name)
		require.NoError(t, os.WriteFile(path, c.b, 0o644))
		f, err := Detect(path, nil)
		if c.want == "" {
			assert.ErrorIs(t, err, ErrUnknownFormat, c.name)
			continue
		}
		require.NoError(t, err, c.name)
		assert.Equal(t, c.want, f.Name, c.name)
	}
}

type handedFile struct {
	noPayloads
	mf *mmapfile.File
}

func (h *handedFile) Close() error { return h.mf.Close() }

// A path is opened once: the descriptor detection read the first bytes
// from is the one the format maps, open in the mode asked for; on the
// format's error it is closed.
func TestOpenHandsTheDescriptorToTheFormat(t *testing.T) {
	dir := t.TempDir()
	for _, name := range []string{"x.handed", "sniffed"} {
		path := filepath.Join(dir, name)
		require.NoError(t, os.WriteFile(path, []byte("HANDED"), 0o644))
		for _, mode := range []mmapfile.Mode{mmapfile.ReadOnly, mmapfile.ReadWrite} {
			handed.fail = false
			f, err := OpenFile(path, mode, nil)
			require.NoError(t, err, name)
			require.NotNil(t, handed.file, "%s: the format got the descriptor", name)
			assert.Equal(t, mode, handed.mode)
			fi, err := handed.file.Stat()
			require.NoError(t, err)
			want, err := os.Stat(path)
			require.NoError(t, err)
			assert.True(t, os.SameFile(want, fi))
			// The descriptor is the File's now: Close closes it.
			require.NoError(t, f.Close())
			_, err = handed.file.Stat()
			assert.ErrorIs(t, err, os.ErrClosed)

			handed.fail = true
			_, err = OpenFile(path, mode, nil)
			require.Error(t, err)
			_, err = handed.file.Stat()
			assert.ErrorIs(t, err, os.ErrClosed, "a failed open closes the descriptor")
		}
	}
	// Not a regular file: refused before anything is opened, with
	// mmapfile's sentinel.
	handed.file = nil
	_, err := Open(dir, &Options{Format: "handed"})
	require.Error(t, err)
	if _, err := os.Stat("/dev/null"); err == nil {
		_, err = Open("/dev/null", nil)
		assert.ErrorIs(t, err, mmapfile.ErrNotRegular)
		assert.Nil(t, handed.file)
	}
}

// A read-write open that waited for the lock while another writer
// replaced the file (as every writer of this module does: a new file
// renamed over the path) opens the new file, not the one no longer there.
func TestOpenReadWriteFollowsAReplacedPath(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "x.handed")
	require.NoError(t, os.WriteFile(path, []byte("HANDED"), 0o644))
	holder, err := mmapfile.OpenFile(path, mmapfile.ReadWrite, nil)
	require.NoError(t, err)
	handed.fail = false
	type result struct {
		f   File
		err error
	}
	done := make(chan result)
	go func() {
		f, err := OpenFile(path, mmapfile.ReadWrite, &Options{Options: mmapfile.Options{Wait: true}})
		done <- result{f, err}
	}()
	// Replace the path while the open waits, then let go of the lock.
	time.Sleep(50 * time.Millisecond)
	tmp := filepath.Join(dir, "new")
	require.NoError(t, os.WriteFile(tmp, []byte("HANDED"), 0o644))
	require.NoError(t, os.Rename(tmp, path))
	require.NoError(t, holder.Close())
	r := <-done
	require.NoError(t, r.err)
	defer r.f.Close()
	held, err := r.f.(*handedFile).mf.OSFile().Stat()
	require.NoError(t, err)
	now, err := os.Stat(path)
	require.NoError(t, err)
	assert.True(t, os.SameFile(held, now), "the open holds the file at the path")
}

// levels counts the parses of the "parsed" test format's options.
var levels int

func init() {
	Register(Format{
		Name: "parsed",
		Open: func(string, mmapfile.Mode, *Options) (File, error) { return nil, errors.ErrUnsupported },
		ParseParams: func(p map[string]string, write bool) (any, error) {
			levels++
			if !write {
				return nil, nil
			}
			switch p["level"] {
			case "", "low":
				return &struct{ high bool }{}, nil
			case "high":
				return &struct{ high bool }{true}, nil
			}
			return nil, errors.New("level is low or high")
		},
	})
}

// The options a command line checked are parsed once: the writer gets
// what the check made of them.
func TestParamsAreParsedOnce(t *testing.T) {
	f, ok := Lookup("parsed")
	require.True(t, ok)
	levels = 0
	o := &Options{Params: map[string]string{"level": "high"}}
	require.NoError(t, f.CheckParams(o, true))
	require.NoError(t, f.CheckParams(o, false))
	assert.Equal(t, 2, levels)
	v, err := ParsedParams[*struct{ high bool }](o, "parsed", true)
	require.NoError(t, err)
	assert.True(t, v.high)
	again, err := ParsedParams[*struct{ high bool }](o, "parsed", true)
	require.NoError(t, err)
	assert.Same(t, v, again)
	assert.Equal(t, 2, levels, "checked: not parsed again")

	// Unchecked options are parsed when the writer asks.
	v, err = ParsedParams[*struct{ high bool }](&Options{}, "parsed", true)
	require.NoError(t, err)
	assert.False(t, v.high)
	assert.Equal(t, 3, levels)
	_, err = ParsedParams[*struct{ high bool }](&Options{Params: map[string]string{"level": "mid"}}, "parsed", true)
	require.EqualError(t, err, "level is low or high")
	bad := &Options{Params: map[string]string{"level": "mid"}}
	require.EqualError(t, f.CheckParams(bad, true), "level is low or high")
	_, err = ParsedParams[int](o, "parsed", true)
	require.ErrorContains(t, err, "not int")
	// A format without options gives the zero value.
	n, err := ParsedParams[int](o, "handed", true)
	require.NoError(t, err)
	assert.Zero(t, n)
}

func init() {
	Register(Format{
		Name: "writeparams",
		Open: func(string, mmapfile.Mode, *Options) (File, error) { return nil, errors.ErrUnsupported },
		ParseParams: ParamsOfWriting(func(p map[string]string) (*struct{ level string }, error) {
			if p["level"] == "bad" {
				return nil, errors.New("level is bad")
			}
			return &struct{ level string }{p["level"]}, nil
		}),
	})
}

// A format whose options are all of writing parses them for Write and
// takes none for reading, whatever the options say.
func TestParamsOfWriting(t *testing.T) {
	f, ok := Lookup("writeparams")
	require.True(t, ok)
	for _, tc := range []struct {
		level   string
		write   bool
		want    string // "" with wantNil: nothing parsed
		wantNil bool
		err     string
	}{
		{level: "high", write: true, want: "high"},
		{level: "", write: true, want: ""},
		{level: "high", write: false, wantNil: true},
		{level: "bad", write: false, wantNil: true},
		{level: "bad", write: true, err: "level is bad"},
	} {
		o := &Options{Params: map[string]string{"level": tc.level}}
		err := f.CheckParams(o, tc.write)
		if tc.err != "" {
			require.EqualError(t, err, tc.err, "%+v", tc)
			continue
		}
		require.NoError(t, err, "%+v", tc)
		v, err := ParsedParams[*struct{ level string }](o, "writeparams", tc.write)
		require.NoError(t, err, "%+v", tc)
		if tc.wantNil {
			assert.Nil(t, v, "%+v", tc)
			continue
		}
		require.NotNil(t, v, "%+v", tc)
		assert.Equal(t, tc.want, v.level, "%+v", tc)
	}
}
