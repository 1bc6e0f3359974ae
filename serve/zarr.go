package serve

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/fnv"
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/mmapkit/mmapkit/format"
	"github.com/mmapkit/mmapkit/layout"
	"github.com/mmapkit/mmapkit/refs"
)

// metaNames are the Zarr v2 metadata keys a store answers.
var metaNames = map[string]bool{".zgroup": true, ".zattrs": true, ".zarray": true, ".zmetadata": true}

// CheckKey checks the segments of a Zarr key under /zarr/F/: a metadata
// name (".zgroup", ".zattrs", ".zarray", ".zmetadata") or a chunk index
// ("0", "3.1.4"; or one number per segment, for the "/" separator) last,
// after array and group names that are not empty, ".", "..", or hold a
// NUL or a backslash. Anything else cannot be a key of a store the server
// describes.
func CheckKey(segs []string) error {
	if len(segs) == 0 {
		return fmt.Errorf("%w: no key (no listings)", ErrBadPath)
	}
	for _, s := range segs {
		if s == "" || s == "." || s == ".." || strings.ContainsAny(s, "\x00\\/") {
			return fmt.Errorf("%w: key segment %q", ErrBadPath, s)
		}
	}
	last := segs[len(segs)-1]
	if metaNames[last] {
		return nil
	}
	for _, n := range strings.Split(last, ".") {
		if n == "" || strings.Trim(n, "0123456789") != "" {
			return fmt.Errorf("%w: %q is neither a metadata key nor a chunk index", ErrBadPath, last)
		}
	}
	return nil
}

// identity tells one version of a file from another: a file renamed over,
// or written so that its size or modification time changed, has another.
// A store's is its directory's.
type identity struct {
	dev, ino    uint64
	size, mtime int64
}

func identityOf(fi os.FileInfo) identity {
	return identity{device(fi), inode(fi), fi.Size(), fi.ModTime().UnixNano()}
}

func (id identity) etag(suffix string) string {
	return `"` + strconv.FormatUint(id.ino, 36) + "-" + strconv.FormatInt(id.size, 36) + "-" + strconv.FormatInt(id.mtime, 36) + suffix + `"`
}

// described is one version of a file as a Zarr store: its reference set,
// built with F's real path as the target, or why there is none.
type described struct {
	id   identity
	real string    // F's real path: the targets start with it
	set  *refs.Set // for /refs/: ranges only
	zset *refs.Set // for /zarr/: ranges, and chunks computed with ReadArray
	err  error
}

// entry caches the description of one file; its lock lets one request
// build it while the others wait.
type entry struct {
	mu sync.Mutex
	d  *described
}

// maxCached bounds the descriptions kept; past it the cache starts over.
const maxCached = 4096

// describe returns the description of the file or store at rel (a real
// path inside the directory) as it stands, built once per version.
func (s *Server) describe(rel string) (*described, int, error) {
	fi, err := s.root.Stat(rel)
	if err != nil {
		return nil, http.StatusNotFound, fmt.Errorf("%s: no such file", filepath.ToSlash(rel))
	}
	s.mu.Lock()
	if s.cache == nil || len(s.cache) >= maxCached {
		s.cache = map[string]*entry{}
	}
	e := s.cache[rel]
	if e == nil {
		e = &entry{}
		s.cache[rel] = e
	}
	s.mu.Unlock()
	e.mu.Lock()
	defer e.mu.Unlock()
	for try := 0; ; try++ {
		id := identityOf(fi)
		if e.d != nil && e.d.id == id {
			break
		}
		d := s.build(rel, id)
		// The description holds if the file did not change while it was
		// read; else read the new version.
		if fi, err = s.root.Stat(rel); err != nil {
			return nil, http.StatusNotFound, fmt.Errorf("%s: no such file", filepath.ToSlash(rel))
		}
		if identityOf(fi) == id || try == 3 {
			e.d = d
			break
		}
	}
	if e.d.err != nil {
		return nil, http.StatusNotFound, e.d.err
	}
	return e.d, 0, nil
}

// build describes the file at rel, of identity id.
func (s *Server) build(rel string, id identity) *described {
	real := filepath.Join(s.dir, rel)
	d := &described{id: id, real: real}
	f, err := format.Open(real, s.formatOptions(real))
	if err != nil {
		d.err = fmt.Errorf("not a file mmapkit reads: %s", s.private(err))
		return d
	}
	defer f.Close()
	if d.set, err = refs.Build(f, real, &refs.Options{Rows: s.opt.Rows}); err == nil {
		d.zset, err = refs.Build(f, real, &refs.Options{Rows: s.opt.Rows, Computed: true})
	}
	if err != nil {
		d.err = errors.New(s.private(err))
	}
	return d
}

// private is an error's text without the directory's place on the
// server's machine.
func (s *Server) private(err error) string {
	return strings.ReplaceAll(err.Error(), s.dir+string(filepath.Separator), "")
}

func modTime(id identity) time.Time { return time.Unix(0, id.mtime) }

// formatOptions are Options.Format for the file at path, without the
// parameters of formats other than the one its name says (a SciDB format
// string would otherwise make every file a SciDB file).
func (s *Server) formatOptions(path string) *format.Options {
	var o format.Options
	if s.opt.Format != nil {
		o = *s.opt.Format
	}
	o.Options.File = nil
	fm, ok := format.ForName(path)
	params := map[string]string{}
	for name, v := range o.Params {
		for _, p := range fm.Params {
			if ok && p.Name == name {
				params[name] = v
			}
		}
	}
	o.Params = params
	return &o
}

// findStore splits segs into the file or store they name first (a
// regular file, or a directory holding .zarray, .zgroup or zarr.json) and
// the rest: it returns how many segments name it and its real path
// relative to the directory.
func (s *Server) findStore(segs []string) (int, string, int, error) {
	for n := 1; n <= len(segs); n++ {
		rel, status, err := s.confine(segs[:n])
		if err != nil {
			return 0, "", status, err
		}
		fi, err := s.root.Stat(rel)
		if err != nil {
			break
		}
		if fi.Mode().IsRegular() {
			return n, rel, 0, nil
		}
		if !fi.IsDir() {
			return 0, "", http.StatusNotFound, fmt.Errorf("%s: not a regular file", strings.Join(segs[:n], "/"))
		}
		for _, m := range []string{".zarray", ".zgroup", "zarr.json"} {
			if mfi, err := s.root.Stat(filepath.Join(rel, m)); err == nil && mfi.Mode().IsRegular() {
				return n, rel, 0, nil
			}
		}
	}
	return 0, "", http.StatusNotFound, fmt.Errorf("%s: no file or Zarr store", strings.Join(segs, "/"))
}

// serveZarr answers /zarr/F/KEY: F as a Zarr v2 store, its metadata made
// by refs, each chunk the bytes of its range, read from the file at
// request time.
func (s *Server) serveZarr(w http.ResponseWriter, r *http.Request, p string) {
	// "/zarr/F/" is the store's root, as readers write it: no listing.
	segs, err := Segments(strings.TrimSuffix(p, "/"))
	if err != nil {
		http.Error(w, err.Error(), http.StatusForbidden)
		return
	}
	n, rel, status, err := s.findStore(segs)
	if err != nil {
		http.Error(w, err.Error(), status)
		return
	}
	if err := CheckKey(segs[n:]); err != nil {
		http.Error(w, err.Error(), http.StatusNotFound)
		return
	}
	key := strings.Join(segs[n:], "/")
	// A chunk is served only from a file of the version its metadata came
	// from: a file changed in between is described anew.
	for try := 0; try < 3; try++ {
		d, status, err := s.describe(rel)
		if err != nil {
			http.Error(w, err.Error(), status)
			return
		}
		if text, ok := d.zset.Meta[key]; ok {
			h := w.Header()
			h.Set("Content-Type", "application/json")
			h.Set("ETag", d.id.etag("-m"))
			h.Set("Cache-Control", "no-cache")
			http.ServeContent(w, r, "", modTime(d.id), strings.NewReader(text))
			return
		}
		if c, ok := d.zset.Computed[key]; ok {
			if s.serveComputed(w, r, rel, d, c) {
				return
			}
			continue
		}
		ref, ok := d.zset.Data[key]
		if !ok {
			http.Error(w, key+": no such key (a missing chunk reads as the fill value)", http.StatusNotFound)
			return
		}
		if s.serveRange(w, r, d, ref) {
			return
		}
	}
	http.Error(w, strings.Join(segs[:n], "/")+": the file keeps changing", http.StatusServiceUnavailable)
}

// serveRange serves a chunk's range from its file, if the file is still
// the one described; false if it is not.
func (s *Server) serveRange(w http.ResponseWriter, r *http.Request, d *described, ref refs.Ref) bool {
	trel, err := filepath.Rel(s.dir, ref.Target)
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return true
	}
	f, fi, status, err := s.openRel(trel, filepath.ToSlash(trel))
	if err != nil {
		if status == http.StatusNotFound {
			return false // gone since it was described
		}
		http.Error(w, err.Error(), status)
		return true
	}
	defer f.Close()
	if (ref.Target == d.real && identityOf(fi) != d.id) || fi.Size() < ref.Offset+ref.Length {
		return false
	}
	h := w.Header()
	h.Set("Content-Type", "application/octet-stream")
	h.Set("ETag", identityOf(fi).etag("-"+strconv.FormatInt(ref.Offset, 36)+"-"+strconv.FormatInt(ref.Length, 36)))
	h.Set("Cache-Control", "no-cache")
	http.ServeContent(w, r, "", fi.ModTime(), &section{f: f, base: ref.Offset, size: ref.Length})
	return true
}

// serveComputed serves a chunk whose bytes are not a range of the file:
// its elements read with ReadArray from the file at rel, if it is still
// the version described; false if it is not. At most as many are read at
// once as there are processors, each into a buffer of its own.
func (s *Server) serveComputed(w http.ResponseWriter, r *http.Request, rel string, d *described, c refs.Computed) bool {
	s.computing <- struct{}{}
	defer func() { <-s.computing }()
	f, err := format.Open(d.real, s.formatOptions(d.real))
	if err != nil {
		return false // changed since it was described
	}
	defer f.Close()
	if fi, err := s.root.Stat(rel); err != nil || identityOf(fi) != d.id {
		return false
	}
	rec := format.RecordAt(f, c.Record)
	buf := make([]byte, c.Count*int64(rec.Type.Size()))
	if err := f.ReadArray(c.Record, buf, c.First, layout.RowMajor, binary.LittleEndian); err != nil {
		http.Error(w, s.private(err), http.StatusInternalServerError)
		return true
	}
	h := w.Header()
	h.Set("Content-Type", "application/octet-stream")
	h.Set("ETag", d.id.etag("-c"+strconv.FormatInt(c.First, 36)+"-"+strconv.FormatInt(c.Count, 36)))
	h.Set("Cache-Control", "no-cache")
	http.ServeContent(w, r, "", modTime(d.id), bytes.NewReader(buf))
	return true
}

// serveRefs answers /refs/F.json: the reference set of F with targets on
// this server's /raw/ route.
func (s *Server) serveRefs(w http.ResponseWriter, r *http.Request, p string) {
	segs, err := Segments(p)
	if err != nil {
		http.Error(w, err.Error(), http.StatusForbidden)
		return
	}
	last, ok := strings.CutSuffix(segs[len(segs)-1], ".json")
	if !ok || last == "" {
		http.Error(w, "/refs/F.json: the name must end in .json", http.StatusNotFound)
		return
	}
	segs[len(segs)-1] = last
	n, rel, status, err := s.findStore(segs)
	if err == nil && n != len(segs) {
		status, err = http.StatusNotFound, fmt.Errorf("%s: no file or Zarr store", strings.Join(segs, "/"))
	}
	if err != nil {
		http.Error(w, err.Error(), status)
		return
	}
	d, status, err := s.describe(rel)
	if err != nil {
		http.Error(w, err.Error(), status)
		return
	}
	base := s.baseURL(r)
	escaped := make([]string, len(segs))
	for i, seg := range segs {
		escaped[i] = url.PathEscape(seg)
	}
	raw := base + "/raw/" + strings.Join(escaped, "/")
	out := &refs.Set{Meta: d.set.Meta, Data: make(map[string]refs.Ref, len(d.set.Data))}
	for k, ref := range d.set.Data {
		ref.Target = raw + escapePath(strings.TrimPrefix(ref.Target, d.real))
		out.Data[k] = ref
	}
	var buf bytes.Buffer
	if err := out.WriteJSON(&buf); err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	sum := fnv.New64a()
	io.WriteString(sum, base)
	h := w.Header()
	h.Set("Content-Type", "application/json")
	h.Set("ETag", d.id.etag("-r"+strconv.FormatUint(sum.Sum64(), 36)))
	h.Set("Cache-Control", "no-cache")
	h.Set("Vary", "Host")
	http.ServeContent(w, r, "", modTime(d.id), bytes.NewReader(buf.Bytes()))
}

// escapePath percent-encodes each segment of a path inside a store
// ("/0/1.2"), keeping its slashes.
func escapePath(p string) string {
	segs := strings.Split(filepath.ToSlash(p), "/")
	for i, seg := range segs {
		segs[i] = url.PathEscape(seg)
	}
	return strings.Join(segs, "/")
}

// baseURL is where clients reach this server: Options.URL, else the
// request's Host, else the address the request came in on.
func (s *Server) baseURL(r *http.Request) string {
	if s.opt.URL != "" {
		return strings.TrimSuffix(s.opt.URL, "/")
	}
	if r.Host != "" {
		return "http://" + r.Host
	}
	if a, ok := r.Context().Value(http.LocalAddrContextKey).(interface{ String() string }); ok {
		return "http://" + a.String()
	}
	return "http://localhost"
}

// section is bytes [base, base+size) of an open file, read at the file's
// own position, so that a copy to a connection goes by sendfile (it is a
// syscall.Conn, and the copy is limited to the range by the reader's
// caller).
type section struct {
	f          *os.File
	base, size int64
}

func (s *section) Read(b []byte) (int, error) {
	pos, err := s.f.Seek(0, io.SeekCurrent)
	if err != nil {
		return 0, err
	}
	left := s.base + s.size - pos
	if left <= 0 {
		return 0, io.EOF
	}
	if int64(len(b)) > left {
		b = b[:left]
	}
	return s.f.Read(b)
}

func (s *section) Seek(off int64, whence int) (int64, error) {
	switch whence {
	case io.SeekCurrent:
		pos, err := s.f.Seek(0, io.SeekCurrent)
		if err != nil {
			return 0, err
		}
		off += pos - s.base
	case io.SeekEnd:
		off += s.size
	}
	if off < 0 {
		return 0, errors.New("serve: seek before the start of a chunk")
	}
	if _, err := s.f.Seek(s.base+off, io.SeekStart); err != nil {
		return 0, err
	}
	return off, nil
}

func (s *section) SyscallConn() (syscall.RawConn, error) { return s.f.SyscallConn() }
