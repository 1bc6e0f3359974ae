// Package serve is a read-only HTTP server for a directory of array files,
// so that fsspec, zarr-python, xarray and dask on other machines read the
// files where they lie, without a copy or a conversion:
//
//   - /raw/F: the bytes of the regular file F, with single and multiple
//     ranges, strong validators and conditional requests (RFC 9110);
//   - /zarr/F/KEY: any file mmapkit reads (or a Zarr store) as a Zarr v2
//     store: the metadata of its reference set (package refs), .zmetadata
//     consolidating them, and each chunk the bytes of its range, read from
//     the file at request time, with ranges and validators too; records
//     whose bytes are no range of the file (text, deflated members, CSV
//     columns) are arrays too, each chunk read with ReadArray when asked
//     for (at most one per processor at a time, 8 MiB at most);
//   - /refs/F.json: the reference set of F, its targets on /raw/.
//
// What is safe: the server never writes under its directory, and never
// opens anything outside it. A request path is percent-decoded exactly
// once; a segment that is empty, "." or "..", or holds a NUL or a slash, is
// refused (403), and the real path (symbolic links resolved) must lie
// inside the directory's real path (403 otherwise), a check repeated on
// the descriptor opened. Only regular files are served, opened without
// blocking: directories, FIFOs and devices are 404. A response is served
// from one open descriptor, first byte to last, by read or sendfile, never
// through a mapping (a computed chunk is read whole first): a file renamed over during a response leaves that
// response all old, and a file truncated under it cuts the response short
// (the connection is closed) instead of crashing the server.
//
// Descriptions are cached per file version (device, inode, size and
// modification time; a store's directory's) and made anew when it
// changes; a chunk is served only from the version its metadata describe.
//
// What is not safe: an in-place write to a file (mmapkit set, a program
// writing through a mapping) during a response may show partly in it; no
// snapshot is taken, which would copy the file. Clients see the change
// between requests by the ETag, which changes with the file's size or
// modification time.
package serve

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/mmapkit/mmapkit/format"
)

// Routes names the routes a Server answers.
const Routes = "/raw/, /zarr/, /refs/"

// Options configure a Server. A nil *Options means the defaults.
type Options struct {
	// MaxConns is how many connections are served at once (default 64);
	// more wait in the listen backlog and are served in turn.
	MaxConns int
	// HeaderTimeout is how long a request's header may take to arrive,
	// and how long an idle keep-alive connection is kept (default 10 s).
	HeaderTimeout time.Duration
	// StallTimeout drops a client that takes no bytes for this long
	// (default 60 s).
	StallTimeout time.Duration
	// Log, if set, gets one line per request: method, path, status,
	// bytes sent and duration.
	Log io.Writer
	// Format are the options files are opened with for /zarr/ and /refs/
	// (a format's parameters apply to the files its extension names).
	Format *format.Options
	// Rows bounds the slices per chunk of a contiguous array under /zarr/
	// and /refs/, as refs.Options.Rows does (0: 64 MiB worth).
	Rows int64
	// URL is where clients reach the server, for the targets of /refs/;
	// empty: http:// and the request's Host.
	URL string
}

func (o *Options) withDefaults() Options {
	var out Options
	if o != nil {
		out = *o
	}
	if out.MaxConns <= 0 {
		out.MaxConns = 64
	}
	if out.HeaderTimeout <= 0 {
		out.HeaderTimeout = 10 * time.Second
	}
	if out.StallTimeout <= 0 {
		out.StallTimeout = 60 * time.Second
	}
	return out
}

// Server serves one directory read-only. Its methods are safe for
// concurrent use.
type Server struct {
	dir  string // the directory's real path
	root *os.Root
	opt  Options

	mu    sync.Mutex
	http  *http.Server
	cache map[string]*entry // descriptions for /zarr/ and /refs/, by real path
	// computing holds a token for each computed chunk being read.
	computing chan struct{}
}

// New returns a server of the directory dir.
func New(dir string, o *Options) (*Server, error) {
	real, err := filepath.EvalSymlinks(dir)
	if err != nil {
		return nil, err
	}
	if real, err = filepath.Abs(real); err != nil {
		return nil, err
	}
	fi, err := os.Stat(real)
	if err != nil {
		return nil, err
	}
	if !fi.IsDir() {
		return nil, fmt.Errorf("serve: %s is not a directory", dir)
	}
	root, err := os.OpenRoot(real)
	if err != nil {
		return nil, err
	}
	return &Server{dir: real, root: root, opt: o.withDefaults(), computing: make(chan struct{}, runtime.GOMAXPROCS(0))}, nil
}

// Close releases the directory. It does not stop a running Serve: use
// Shutdown.
func (s *Server) Close() error { return s.root.Close() }

// Serve accepts connections on l until Shutdown, serving at most
// MaxConns of them at once. It returns nil after Shutdown.
func (s *Server) Serve(l net.Listener) error {
	hs := &http.Server{
		Handler:           s,
		ReadHeaderTimeout: s.opt.HeaderTimeout,
		IdleTimeout:       s.opt.HeaderTimeout,
		ErrorLog:          nil,
	}
	s.mu.Lock()
	s.http = hs
	s.mu.Unlock()
	err := hs.Serve(&stallListener{Listener: newLimitListener(l, s.opt.MaxConns), stall: s.opt.StallTimeout})
	if errors.Is(err, http.ErrServerClosed) {
		return nil
	}
	return err
}

// Shutdown stops accepting connections and lets the responses in flight
// finish until ctx is done, then closes every connection.
func (s *Server) Shutdown(ctx context.Context) error {
	s.mu.Lock()
	hs := s.http
	s.mu.Unlock()
	if hs == nil {
		return nil
	}
	err := hs.Shutdown(ctx)
	if errors.Is(err, context.DeadlineExceeded) || errors.Is(err, context.Canceled) {
		return hs.Close()
	}
	return err
}

// ServeHTTP answers one request.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	start := time.Now()
	lw := &loggedWriter{ResponseWriter: w, status: http.StatusOK}
	defer func() {
		if s.opt.Log != nil {
			fmt.Fprintf(s.opt.Log, "%s %s %s %d %d %s\n", start.UTC().Format(time.RFC3339), r.Method, r.URL.EscapedPath(), lw.status, lw.n, time.Since(start).Round(time.Microsecond))
		}
	}()
	if r.ContentLength != 0 || len(r.TransferEncoding) > 0 {
		// The body is never read: the connection cannot be kept.
		lw.Header().Set("Connection", "close")
	}
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		lw.Header().Set("Allow", "GET, HEAD")
		http.Error(lw, "read-only: GET and HEAD only", http.StatusMethodNotAllowed)
		return
	}
	route, rest, _ := strings.Cut(strings.TrimPrefix(r.URL.EscapedPath(), "/"), "/")
	switch route {
	case "raw":
		s.serveRaw(lw, r, rest)
	case "zarr":
		s.serveZarr(lw, r, rest)
	case "refs":
		s.serveRefs(lw, r, rest)
	default:
		http.Error(lw, "no such route: the routes are "+Routes, http.StatusNotFound)
	}
}

// serveRaw serves the bytes of the regular file at the escaped path p.
func (s *Server) serveRaw(w http.ResponseWriter, r *http.Request, p string) {
	segs, err := Segments(p)
	if err != nil {
		http.Error(w, err.Error(), http.StatusForbidden)
		return
	}
	f, fi, status, err := s.open(segs)
	if err != nil {
		http.Error(w, err.Error(), status)
		return
	}
	defer f.Close()
	h := w.Header()
	h.Set("Content-Type", "application/octet-stream")
	h.Set("ETag", etag(fi))
	h.Set("Cache-Control", "no-cache")
	if v := r.Header.Get("Range"); v != "" {
		if _, err := ParseRange(v, fi.Size()); errors.Is(err, ErrRangeSyntax) {
			r.Header.Del("Range") // bad syntax is ignored: the whole file
		}
	}
	// ServeContent answers Range (one part, or multipart for several),
	// If-Range, If-None-Match and If-Modified-Since, 416 with
	// "bytes */SIZE", and HEAD; it copies with io.CopyN, which sendfile
	// serves from the descriptor.
	http.ServeContent(w, r, "", fi.ModTime(), f)
}

// ErrOutside: the path leads out of the served directory.
var ErrOutside = errors.New("outside the served directory")

// open opens the regular file at segs inside the directory, confined to
// it, without blocking, and returns it with its information; or the HTTP
// status and error that say why not.
func (s *Server) open(segs []string) (*os.File, os.FileInfo, int, error) {
	rel, status, err := s.confine(segs)
	if err != nil {
		return nil, nil, status, err
	}
	return s.openRel(rel, strings.Join(segs, "/"))
}

// confine returns the real path of segs relative to the directory (links
// resolved), or the HTTP status and error that say why there is none
// inside it.
func (s *Server) confine(segs []string) (string, int, error) {
	name := strings.Join(segs, "/")
	real, err := filepath.EvalSymlinks(filepath.Join(s.dir, filepath.Join(segs...)))
	if err != nil {
		return "", http.StatusNotFound, fmt.Errorf("%s: no such file", name)
	}
	rel, err := filepath.Rel(s.dir, real)
	if err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) || filepath.IsAbs(rel) {
		return "", http.StatusForbidden, fmt.Errorf("%s: %w", name, ErrOutside)
	}
	return rel, 0, nil
}

// openRel opens the regular file at rel, a real path inside the
// directory, without blocking; name is what errors call it.
func (s *Server) openRel(rel, name string) (*os.File, os.FileInfo, int, error) {
	// The root refuses, without a race, a link swapped in meanwhile that
	// leads out.
	f, err := s.root.OpenFile(rel, os.O_RDONLY|oNonblock, 0)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return nil, nil, http.StatusNotFound, fmt.Errorf("%s: no such file", name)
		}
		return nil, nil, http.StatusForbidden, fmt.Errorf("%s: %w", name, ErrOutside)
	}
	fi, err := f.Stat()
	if err != nil || !fi.Mode().IsRegular() {
		f.Close()
		what := "not a regular file"
		if err == nil && fi.IsDir() {
			what = "a directory (no listings)"
		}
		return nil, nil, http.StatusNotFound, fmt.Errorf("%s: %s", name, what)
	}
	if err := clearNonblock(f); err != nil {
		f.Close()
		return nil, nil, http.StatusInternalServerError, err
	}
	return f, fi, 0, nil
}

// etag is a strong validator of a file's identity and version: its inode,
// size and modification time.
func etag(fi os.FileInfo) string {
	return `"` + strconv.FormatUint(inode(fi), 36) + "-" + strconv.FormatInt(fi.Size(), 36) + "-" + strconv.FormatInt(fi.ModTime().UnixNano(), 36) + `"`
}

// loggedWriter counts what a response sent. It keeps http.ResponseWriter's
// ReadFrom, through which ServeContent's copy reaches sendfile.
type loggedWriter struct {
	http.ResponseWriter
	status int
	n      int64
}

func (w *loggedWriter) WriteHeader(code int) {
	w.status = code
	w.ResponseWriter.WriteHeader(code)
}

func (w *loggedWriter) Write(b []byte) (int, error) {
	n, err := w.ResponseWriter.Write(b)
	w.n += int64(n)
	return n, err
}

func (w *loggedWriter) ReadFrom(r io.Reader) (int64, error) {
	n, err := w.ResponseWriter.(io.ReaderFrom).ReadFrom(r)
	w.n += n
	return n, err
}

// Unwrap lets http.ResponseController reach the connection.
func (w *loggedWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }
