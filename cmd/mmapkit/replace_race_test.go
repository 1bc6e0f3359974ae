package main

import (
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// swapLoop replaces path by one version after the other, by rename, until
// stop is closed.
func swapLoop(t *testing.T, path string, versions [][]byte, stop chan struct{}, wg *sync.WaitGroup) {
	defer wg.Done()
	dir := filepath.Dir(path)
	for i := 0; ; i++ {
		select {
		case <-stop:
			return
		default:
		}
		tmp := filepath.Join(dir, ".swap")
		if err := os.WriteFile(tmp, versions[i%len(versions)], 0o644); err != nil {
			t.Error(err)
			return
		}
		if err := os.Rename(tmp, path); err != nil {
			t.Error(err)
			return
		}
	}
}

// A file replaced by mv while readers run: every reader prints one version
// whole, or fails cleanly — never a mix of two versions, never a panic.
// (The CLI used to read a CSV twice and to open a file twice, once for
// its header and once for its payload.)
func TestReplacedWhileReading(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the binary many times")
	}
	f32 := mustMk(t, "dataset", "-b", "-g", "[3]f32", "-s", "1")
	i32 := mustMk(t, "dataset", "-b", "-g", "[3]i32", "-s", "1")
	for _, c := range []struct {
		name     string
		versions []string
	}{
		{"data.csv", []string{"a\n1\n2\n", "a,b,c\n1,x,true\n2,y,false\n3,z,true\n", "hello\n"}},
		{"d.in", []string{f32, i32}},
	} {
		dir := t.TempDir()
		path := filepath.Join(dir, c.name)
		var versions [][]byte
		want := map[string]bool{}
		for _, v := range c.versions {
			require.NoError(t, os.WriteFile(path, []byte(v), 0o644))
			want[mustMk(t, "cat", path)] = true
			versions = append(versions, []byte(v))
		}
		stop := make(chan struct{})
		var wg sync.WaitGroup
		wg.Add(1)
		go swapLoop(t, path, versions, stop, &wg)
		var okRuns, refused atomic.Int64
		var readers sync.WaitGroup
		for r := 0; r < 2; r++ {
			readers.Add(1)
			go func() {
				defer readers.Done()
				for k := 0; k < 60; k++ {
					res := mk(t, "--quiet", "cat", path)
					assert.NotRegexp(t, `panic|goroutine [0-9]+ \[|SIGBUS|SIGSEGV`, res.stderr)
					switch res.code {
					case 0:
						okRuns.Add(1)
						assert.True(t, want[res.stdout], "%s: output of no single version: %q", c.name, res.stdout)
					case 1:
						refused.Add(1)
						assert.True(t, strings.HasPrefix(res.stderr, "mmapkit: "), res.stderr)
					default:
						t.Errorf("%s: exit %d: %s", c.name, res.code, res.stderr)
					}
				}
			}()
		}
		readers.Wait()
		close(stop)
		wg.Wait()
		t.Logf("%s: %d runs printed one whole version, %d were refused cleanly", c.name, okRuns.Load(), refused.Load())
		assert.Positive(t, okRuns.Load())
	}
}
