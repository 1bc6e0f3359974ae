package main

import (
	"bufio"
	"bytes"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// mmapkit serve: one start-up line with the real port, a log line per
// request, SIGTERM lets the response in flight finish and exits 0; a busy
// address is exit 1 naming it.
func TestServeCommand(t *testing.T) {
	dir := t.TempDir()
	data := bytes.Repeat([]byte("0123456789abcdef"), 1<<20) // 16 MiB
	require.NoError(t, os.WriteFile(filepath.Join(dir, "x.bin"), data, 0o644))

	cmd := exec.Command(mkBin, "serve", "--addr", "127.0.0.1:0", "--log", dir)
	stderr, err := cmd.StderrPipe()
	require.NoError(t, err)
	require.NoError(t, cmd.Start())
	defer cmd.Process.Kill()
	lines := bufio.NewScanner(stderr)
	require.True(t, lines.Scan())
	m := regexp.MustCompile(`^mmapkit: serving (.+) on http://(127\.0\.0\.1:\d+)/ \(read-only; /raw/, /zarr/, /refs/\)$`).FindStringSubmatch(lines.Text())
	require.NotNil(t, m, lines.Text())
	assert.Equal(t, dir, m[1])
	base := "http://" + m[2]

	req, _ := http.NewRequest("GET", base+"/raw/x.bin", nil)
	req.Header.Set("Range", "bytes=16-31")
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	assert.Equal(t, 206, resp.StatusCode)
	assert.Equal(t, "0123456789abcdef", string(body))
	require.True(t, lines.Scan())
	assert.Regexp(t, `^\S+ GET /raw/x\.bin 206 16 \S+$`, lines.Text())

	// A download in flight when SIGTERM comes finishes; then exit 0.
	resp, err = http.Get(base + "/raw/x.bin")
	require.NoError(t, err)
	defer resp.Body.Close()
	head := make([]byte, 1<<10)
	_, err = io.ReadFull(resp.Body, head)
	require.NoError(t, err)
	require.NoError(t, cmd.Process.Signal(syscall.SIGTERM))
	rest, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	assert.True(t, bytes.Equal(data, append(head, rest...)), "the response in flight is whole")
	done := make(chan error, 1)
	go func() {
		for lines.Scan() {
		}
		done <- cmd.Wait()
	}()
	select {
	case err := <-done:
		assert.NoError(t, err, "exit 0 after SIGTERM")
	case <-time.After(10 * time.Second):
		t.Fatal("serve did not exit after SIGTERM")
	}

	// A busy address.
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	defer l.Close()
	r := mk(t, "serve", "--addr", l.Addr().String(), dir)
	assert.Equal(t, 1, r.code)
	assert.Contains(t, r.stderr, "mmapkit: "+l.Addr().String()+": ")
	assert.Contains(t, r.stderr, "address already in use")
}
