package serve

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"mime"
	"mime/multipart"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// pattern is n bytes that differ from offset to offset.
func pattern(n int, seed byte) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(i*7+i>>8) ^ seed
	}
	return b
}

type fixture struct {
	dir  string // served
	base string // http://addr
	addr string
	srv  *Server
	data []byte // a.bin
	log  *syncBuffer
}

type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// start serves a directory of: a.bin (1 MiB), sub/b.bin, a file and a
// directory outside reached by symbolic links, a link inside, a FIFO and
// an empty directory.
func start(t *testing.T, o *Options) *fixture {
	t.Helper()
	top := t.TempDir()
	dir := filepath.Join(top, "served")
	outside := filepath.Join(top, "outside")
	require.NoError(t, os.MkdirAll(filepath.Join(dir, "sub"), 0o755))
	require.NoError(t, os.MkdirAll(filepath.Join(dir, "empty"), 0o755))
	require.NoError(t, os.MkdirAll(outside, 0o755))
	fx := &fixture{dir: dir, data: pattern(1<<20, 0), log: &syncBuffer{}}
	require.NoError(t, os.WriteFile(filepath.Join(dir, "a.bin"), fx.data, 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "sub", "b.bin"), []byte("bee"), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "%2e"), []byte("literal"), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(outside, "secret"), []byte("secret"), 0o644))
	require.NoError(t, os.Symlink(filepath.Join(outside, "secret"), filepath.Join(dir, "out-file")))
	require.NoError(t, os.Symlink(outside, filepath.Join(dir, "out-dir")))
	require.NoError(t, os.Symlink("../a.bin", filepath.Join(dir, "sub", "in-link")))
	require.NoError(t, os.Symlink(filepath.Join(dir, "a.bin"), filepath.Join(dir, "abs-in-link")))
	mkfifo(t, filepath.Join(dir, "fifo"))

	if o == nil {
		o = &Options{}
	}
	o.Log = fx.log
	srv, err := New(dir, o)
	require.NoError(t, err)
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	fx.srv, fx.addr, fx.base = srv, l.Addr().String(), "http://"+l.Addr().String()
	done := make(chan error, 1)
	go func() { done <- srv.Serve(l) }()
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
		defer cancel()
		assert.NoError(t, srv.Shutdown(ctx))
		assert.NoError(t, <-done)
		srv.Close()
	})
	return fx
}

func (fx *fixture) get(t *testing.T, path string, hdr ...string) (*http.Response, []byte) {
	t.Helper()
	return fx.do(t, http.MethodGet, path, hdr...)
}

func (fx *fixture) do(t *testing.T, method, path string, hdr ...string) (*http.Response, []byte) {
	t.Helper()
	req, err := http.NewRequest(method, fx.base+path, nil)
	require.NoError(t, err)
	for i := 0; i+1 < len(hdr); i += 2 {
		req.Header.Set(hdr[i], hdr[i+1])
	}
	tr := &http.Transport{DisableCompression: true}
	defer tr.CloseIdleConnections()
	resp, err := (&http.Client{Transport: tr}).Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	return resp, body
}

// raw sends one request exactly as written (no client cleans its path)
// and returns the status code.
func (fx *fixture) raw(t *testing.T, request string) int {
	t.Helper()
	c, err := net.Dial("tcp", fx.addr)
	require.NoError(t, err)
	defer c.Close()
	c.SetDeadline(time.Now().Add(5 * time.Second))
	_, err = io.WriteString(c, request)
	require.NoError(t, err)
	resp, err := http.ReadResponse(bufio.NewReader(c), nil)
	require.NoError(t, err, "request %q", request)
	resp.Body.Close()
	return resp.StatusCode
}

func TestRawWholeAndHeaders(t *testing.T) {
	fx := start(t, nil)
	resp, body := fx.get(t, "/raw/a.bin", "Accept-Encoding", "gzip")
	require.Equal(t, http.StatusOK, resp.StatusCode)
	assert.Equal(t, fx.data, body)
	assert.Equal(t, "1048576", resp.Header.Get("Content-Length"))
	assert.Equal(t, "bytes", resp.Header.Get("Accept-Ranges"))
	assert.Equal(t, "application/octet-stream", resp.Header.Get("Content-Type"))
	assert.Empty(t, resp.Header.Get("Content-Encoding"), "never compressed, though the client asks for gzip")
	assert.Regexp(t, `^"[0-9a-z]+-[0-9a-z]+-[0-9a-z]+"$`, resp.Header.Get("ETag"), "a strong validator")
	assert.NotEmpty(t, resp.Header.Get("Last-Modified"))

	head, hbody := fx.do(t, http.MethodHead, "/raw/a.bin")
	assert.Equal(t, http.StatusOK, head.StatusCode)
	assert.Empty(t, hbody)
	assert.Equal(t, "1048576", head.Header.Get("Content-Length"))
	assert.Equal(t, resp.Header.Get("ETag"), head.Header.Get("ETag"))

	_, b := fx.get(t, "/raw/sub/b.bin")
	assert.Equal(t, "bee", string(b))
	assert.Contains(t, fx.log.String(), "GET /raw/a.bin 200 1048576 ", "one log line per request")
}

func TestRawRanges(t *testing.T) {
	fx := start(t, nil)
	size := int64(len(fx.data))
	for _, c := range []struct {
		rng          string
		status       int
		contentRange string
		body         []byte
	}{
		{"bytes=0-0", 206, "bytes 0-0/1048576", fx.data[:1]},
		{"bytes=100-199", 206, "bytes 100-199/1048576", fx.data[100:200]},
		{"bytes=1048000-", 206, "bytes 1048000-1048575/1048576", fx.data[1048000:]},
		{"bytes=-10", 206, "bytes 1048566-1048575/1048576", fx.data[size-10:]},
		{"bytes=1048500-9999999", 206, "bytes 1048500-1048575/1048576", fx.data[1048500:]},
		{"bytes=1048576-", 416, "bytes */1048576", nil},
		{"bytes=2000000-2000010", 416, "bytes */1048576", nil},
		{"bytes=banana", 200, "", fx.data},
		{"pages=1-2", 200, "", fx.data},
		{"bytes=5-2", 200, "", fx.data},
	} {
		resp, body := fx.get(t, "/raw/a.bin", "Range", c.rng)
		assert.Equal(t, c.status, resp.StatusCode, c.rng)
		assert.Equal(t, c.contentRange, resp.Header.Get("Content-Range"), c.rng)
		if c.body != nil {
			assert.Equal(t, c.body, body, c.rng)
		}
	}

	// Several ranges: one multipart response, each part its bytes.
	resp, body := fx.get(t, "/raw/a.bin", "Range", "bytes=0-9,1000-1009")
	require.Equal(t, 206, resp.StatusCode)
	mt, params, err := mime.ParseMediaType(resp.Header.Get("Content-Type"))
	require.NoError(t, err)
	assert.Equal(t, "multipart/byteranges", mt)
	mr := multipart.NewReader(bytes.NewReader(body), params["boundary"])
	for _, want := range []struct {
		cr   string
		data []byte
	}{{"bytes 0-9/1048576", fx.data[:10]}, {"bytes 1000-1009/1048576", fx.data[1000:1010]}} {
		p, err := mr.NextPart()
		require.NoError(t, err)
		assert.Equal(t, want.cr, p.Header.Get("Content-Range"))
		got, _ := io.ReadAll(p)
		assert.Equal(t, want.data, got)
	}
}

func TestRawConditional(t *testing.T) {
	fx := start(t, nil)
	resp, _ := fx.get(t, "/raw/a.bin")
	tag, mod := resp.Header.Get("ETag"), resp.Header.Get("Last-Modified")

	r, _ := fx.get(t, "/raw/a.bin", "If-None-Match", tag)
	assert.Equal(t, http.StatusNotModified, r.StatusCode)
	r, _ = fx.get(t, "/raw/a.bin", "If-Modified-Since", mod)
	assert.Equal(t, http.StatusNotModified, r.StatusCode)
	r, _ = fx.get(t, "/raw/a.bin", "If-None-Match", `"other"`)
	assert.Equal(t, http.StatusOK, r.StatusCode)
	r, body := fx.get(t, "/raw/a.bin", "Range", "bytes=0-3", "If-Range", tag)
	assert.Equal(t, http.StatusPartialContent, r.StatusCode)
	assert.Equal(t, fx.data[:4], body)
	r, body = fx.get(t, "/raw/a.bin", "Range", "bytes=0-3", "If-Range", `"another"`)
	assert.Equal(t, http.StatusOK, r.StatusCode, "another validator: the whole file")
	assert.Len(t, body, len(fx.data))

	// A new version of the file has a new validator.
	require.NoError(t, os.WriteFile(filepath.Join(fx.dir, "a.bin"), pattern(100, 1), 0o644))
	r, _ = fx.get(t, "/raw/a.bin", "If-None-Match", tag)
	assert.Equal(t, http.StatusOK, r.StatusCode)
	assert.NotEqual(t, tag, r.Header.Get("ETag"))
}

func TestReadOnly(t *testing.T) {
	fx := start(t, nil)
	for _, m := range []string{"POST", "PUT", "DELETE", "PATCH", "OPTIONS"} {
		resp, _ := fx.do(t, m, "/raw/a.bin")
		assert.Equal(t, http.StatusMethodNotAllowed, resp.StatusCode, m)
		assert.Equal(t, "GET, HEAD", resp.Header.Get("Allow"), m)
	}
	// A body is never read: the connection closes after the answer.
	c, err := net.Dial("tcp", fx.addr)
	require.NoError(t, err)
	defer c.Close()
	io.WriteString(c, "PUT /raw/a.bin HTTP/1.1\r\nHost: x\r\nContent-Length: 1000000\r\n\r\nabc")
	br := bufio.NewReader(c)
	resp, err := http.ReadResponse(br, nil)
	require.NoError(t, err)
	assert.Equal(t, http.StatusMethodNotAllowed, resp.StatusCode)
	assert.True(t, resp.Close, "the connection is not kept")
	data, _ := os.ReadFile(filepath.Join(fx.dir, "a.bin"))
	assert.Equal(t, fx.data, data, "nothing written")
}

func TestConfinement(t *testing.T) {
	fx := start(t, nil)
	for _, c := range []struct {
		target string
		status int
	}{
		{"/raw/a.bin", 200},
		{"/raw/sub/in-link", 200}, // a link inside the directory is followed
		{"/raw/abs-in-link", 200}, // an absolute one too, where it stays inside
		{"/raw/%252e", 200},       // the literal name "%2e": decoded once
		{"/raw/sub/%2e%2e/a.bin", 403},
		{"/raw/../a.bin", 403},
		{"/raw/%2e%2e/served/a.bin", 403},
		{"/raw/sub/..%2fa.bin", 403},
		{"/raw/sub/..%2F..%2Foutside%2Fsecret", 403},
		{"/raw//etc/passwd", 403},
		{"/raw/%2Fetc%2Fpasswd", 403},
		{"/raw/./a.bin", 403},
		{"/raw/a.bin%00", 403},
		{"/raw/sub%5c..%5ca.bin", 403},
		{"/raw/out-file", 403},       // a link to a file outside
		{"/raw/out-dir/secret", 403}, // a link to a directory outside
		{"/raw/fifo", 404},           // not a regular file, and no waiting for a writer
		{"/raw/empty", 404},          // no listings
		{"/raw/sub", 404},
		{"/raw/nope", 404},
		{"/other/a.bin", 404},
		{"/", 404},
	} {
		got := fx.raw(t, "GET "+c.target+" HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
		assert.Equal(t, c.status, got, c.target)
	}
	// An absolute-form target is judged by its path.
	assert.Equal(t, 403, fx.raw(t, "GET http://x/raw/%2e%2e/outside/secret HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n"))
	assert.Equal(t, 200, fx.raw(t, "GET http://x/raw/a.bin HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n"))
}

// A client that never finishes its header is dropped after HeaderTimeout.
func TestStalledHeaderDropped(t *testing.T) {
	fx := start(t, &Options{HeaderTimeout: 300 * time.Millisecond})
	c, err := net.Dial("tcp", fx.addr)
	require.NoError(t, err)
	defer c.Close()
	io.WriteString(c, "GET /raw/a.bin HTTP/1.1\r\nHost: x\r\n") // no end of header
	c.SetReadDeadline(time.Now().Add(5 * time.Second))
	t0 := time.Now()
	b, err := io.ReadAll(c)
	assert.NoError(t, err, "closed by the server, not by our deadline")
	assert.Less(t, time.Since(t0), 4*time.Second)
	assert.NotContains(t, string(b), "200 OK")
}

// A file renamed over mid-response: that response is all old, the next
// all new with a new validator.
func TestRenameOverMidResponse(t *testing.T) {
	fx := start(t, nil)
	path := filepath.Join(fx.dir, "big.bin")
	old := pattern(32<<20, 3)
	require.NoError(t, os.WriteFile(path, old, 0o644))
	resp, err := http.Get(fx.base + "/raw/big.bin")
	require.NoError(t, err)
	defer resp.Body.Close()
	head := make([]byte, 1<<16)
	_, err = io.ReadFull(resp.Body, head)
	require.NoError(t, err)

	fresh := pattern(32<<20, 9)
	tmp := filepath.Join(fx.dir, ".big.bin.tmp")
	require.NoError(t, os.WriteFile(tmp, fresh, 0o644))
	require.NoError(t, os.Rename(tmp, path))

	rest, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	assert.True(t, bytes.Equal(old, append(head, rest...)), "the response is all old")

	r2, body := fx.get(t, "/raw/big.bin")
	assert.True(t, bytes.Equal(fresh, body), "the next is all new")
	assert.NotEqual(t, resp.Header.Get("ETag"), r2.Header.Get("ETag"))
}

// A file truncated under a response cuts it short; the server lives on.
func TestTruncatedUnderResponse(t *testing.T) {
	fx := start(t, nil)
	path := filepath.Join(fx.dir, "big.bin")
	require.NoError(t, os.WriteFile(path, pattern(64<<20, 5), 0o644))
	resp, err := http.Get(fx.base + "/raw/big.bin")
	require.NoError(t, err)
	defer resp.Body.Close()
	_, err = io.ReadFull(resp.Body, make([]byte, 1<<16))
	require.NoError(t, err)
	require.NoError(t, os.Truncate(path, 1<<20))
	n, err := io.Copy(io.Discard, resp.Body)
	assert.Error(t, err, "the response is cut short, not padded")
	assert.Less(t, n+1<<16, int64(64<<20))

	r2, body := fx.get(t, "/raw/a.bin")
	assert.Equal(t, 200, r2.StatusCode, "the server is alive")
	assert.Equal(t, fx.data, body)
}

// 200 requests at once through 8 connections at a time, all answered
// right, and nothing left behind: no goroutine, no descriptor.
func TestConcurrentAndNothingLeaks(t *testing.T) {
	nothingLeaks(t, func() {
		fx := start(t, &Options{MaxConns: 8})
		hammer(t, fx, 200, func(i int) error {
			lo := (i * 4099) % (1 << 20)
			_, body, err := fetch(fx.base+"/raw/a.bin", fmt.Sprintf("bytes=%d-%d", lo, lo+999))
			if err == nil && !bytes.Equal(body, fx.data[lo:min(lo+1000, len(fx.data))]) {
				err = fmt.Errorf("range %d: wrong bytes", lo)
			}
			return err
		})
	})
}

// hammer runs request(0) … request(n-1) at once, reports their errors,
// and stops fx's server.
func hammer(t *testing.T, fx *fixture, n int, request func(i int) error) {
	t.Helper()
	var wg sync.WaitGroup
	errs := make(chan error, n)
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := request(i); err != nil {
				errs <- err
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
	defer cancel()
	require.NoError(t, fx.srv.Shutdown(ctx))
	fx.srv.Close()
}

// fetch GETs url on a connection of its own (with a Range header unless
// rng is empty) and reads the whole body.
func fetch(url, rng string) (int, []byte, error) {
	req, err := http.NewRequest("GET", url, nil)
	if err != nil {
		return 0, nil, err
	}
	if rng != "" {
		req.Header.Set("Range", rng)
	}
	tr := &http.Transport{DisableKeepAlives: true, DisableCompression: true}
	resp, err := (&http.Client{Transport: tr, Timeout: 20 * time.Second}).Do(req)
	if err != nil {
		return 0, nil, err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	return resp.StatusCode, body, err
}

// nothingLeaks runs work, which starts and stops a server, and checks
// that no goroutine or descriptor outlives it.
func nothingLeaks(t *testing.T, work func()) {
	t.Helper()
	before := runtime.NumGoroutine()
	fdsBefore := openFDs(t)
	work()
	deadline := time.Now().Add(5 * time.Second)
	for time.Now().Before(deadline) && (runtime.NumGoroutine() > before+2 || openFDs(t) > fdsBefore) {
		time.Sleep(50 * time.Millisecond)
	}
	assert.LessOrEqual(t, runtime.NumGoroutine(), before+2, "goroutines left behind")
	assert.LessOrEqual(t, openFDs(t), fdsBefore, "descriptors left behind")
}

func openFDs(t *testing.T) int {
	des, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		t.Skip("no /proc/self/fd here")
	}
	return len(des)
}

func TestSegments(t *testing.T) {
	for _, c := range []struct {
		in   string
		want []string
		ok   bool
	}{
		{"a.bin", []string{"a.bin"}, true},
		{"d/e%20f.npy", []string{"d", "e f.npy"}, true},
		{"%252e", []string{"%2e"}, true},
		{"", nil, false},
		{"a//b", nil, false},
		{"a/", nil, false},
		{"%2e%2e/x", nil, false},
		{"a/..%2fb", nil, false},
		{"%2Fetc", nil, false},
		{"a%00", nil, false},
		{"a%5cb", nil, false},
		{"%zz", nil, false},
	} {
		got, err := Segments(c.in)
		if !c.ok {
			assert.ErrorIs(t, err, ErrBadPath, c.in)
			continue
		}
		require.NoError(t, err, c.in)
		assert.Equal(t, c.want, got, c.in)
	}
}

func TestParseRange(t *testing.T) {
	for _, c := range []struct {
		in   string
		want []Range
		err  error
	}{
		{"bytes=0-9", []Range{{0, 10}}, nil},
		{"bytes=5-", []Range{{5, 95}}, nil},
		{"bytes=-5", []Range{{95, 5}}, nil},
		{"bytes=-500", []Range{{0, 100}}, nil},
		{"bytes=90-200", []Range{{90, 10}}, nil},
		{"bytes=0-1, 5-6", []Range{{0, 2}, {5, 2}}, nil},
		{"bytes=100-", nil, ErrRangeNotSatisfiable},
		{"bytes=200-300,-0", nil, ErrRangeNotSatisfiable},
		{"bytes=5-2", nil, ErrRangeSyntax},
		{"bytes=a-b", nil, ErrRangeSyntax},
		{"bytes=", nil, ErrRangeSyntax},
		{"bytes=1", nil, ErrRangeSyntax},
		{"items=0-1", nil, ErrRangeSyntax},
		{"bytes=99999999999999999999-", nil, ErrRangeSyntax},
		{"bytes=+1-2", nil, ErrRangeSyntax},
	} {
		got, err := ParseRange(c.in, 100)
		if c.err != nil {
			assert.ErrorIs(t, err, c.err, c.in)
			continue
		}
		require.NoError(t, err, c.in)
		assert.Equal(t, c.want, got, c.in)
	}
	// An empty file satisfies no range, a suffix included.
	for _, v := range []string{"bytes=-1", "bytes=0-", "bytes=0-0"} {
		_, err := ParseRange(v, 0)
		assert.ErrorIs(t, err, ErrRangeNotSatisfiable, v)
	}
}

func FuzzSegments(f *testing.F) {
	for _, s := range []string{"a.bin", "d/e%20f.npy", "%252e", "%2e%2e/x", "a/..%2fb", "%2Fetc", "a%00", "x/y/z"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, p string) {
		segs, err := Segments(p)
		if err != nil {
			return
		}
		for _, s := range segs {
			if s == "" || s == "." || s == ".." || strings.ContainsAny(s, "/\\\x00") {
				t.Fatalf("%q gave the segment %q", p, s)
			}
		}
		if j := filepath.Join(segs...); filepath.IsAbs(j) || j == ".." || strings.HasPrefix(j, "../") {
			t.Fatalf("%q leads out: %q", p, segs)
		}
	})
}

func FuzzParseRange(f *testing.F) {
	for _, s := range []string{"bytes=0-9", "bytes=-5", "bytes=5-", "bytes=0-1,5-6", "bytes=5-2", "bytes="} {
		f.Add(s, int64(100))
	}
	f.Fuzz(func(t *testing.T, v string, size int64) {
		if size < 0 {
			return
		}
		rs, err := ParseRange(v, size)
		if err != nil {
			return
		}
		for _, r := range rs {
			if r.Start < 0 || r.Length <= 0 || r.Start+r.Length > size {
				t.Fatalf("%q of %d: range %+v outside the file", v, size, r)
			}
		}
	})
}
