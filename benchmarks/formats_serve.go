package benchmarks

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"sync"
	"time"

	"github.com/mmapkit/mmapkit/layout"
	"github.com/mmapkit/mmapkit/npy"
	"github.com/mmapkit/mmapkit/serve"
)

// The server figures: 1 MiB GETs over loopback on 16 connections, of a
// .npy of the suite's data whose rows are 1 MiB, each row once per
// repetition, from mmapkit's server (in this process) and from nginx
// (another process, sendfile on) serving the same file in the same run,
// one nginx repetition before each of mmapkit's.
var serveSpecs = []spec{
	{name: "serve_raw_range", title: "serve: 1 MiB range GETs of /raw/F over loopback, 16 connections (Go client in the same process)", unit: GBps, ceiling: "nginx_raw_range", goal: 0.9, pkg: "serve"},
	{name: "serve_zarr_chunk", title: "serve: /zarr/F/0/k.0 GETs of the same bytes as chunks of 1 MiB (one row each), same setup", unit: GBps, ceiling: "nginx_raw_range", goal: 0.8, pkg: "serve"},
	{name: "nginx_raw_range", title: "nginx (sendfile on): the same range GETs of the same file, same client", unit: GBps, ceiling: "serve_raw_range", peer: true, pkg: "serve"},
}

func init() {
	formatMeasures["serve_raw_range"] = func(s *suite) (float64, int64, error) { return s.serveFigure((*serveRig).rawRep) }
	formatMeasures["serve_zarr_chunk"] = func(s *suite) (float64, int64, error) { return s.serveFigure((*serveRig).zarrRep) }
	formatMeasures["nginx_raw_range"] = func(s *suite) (float64, int64, error) { return s.serveFigure((*serveRig).nginxRep) }
	figureReps["nginx_raw_range"] = func(s *suite) ceilingRep { return rigRep(s, (*serveRig).nginxRep) }
	figureReps["serve_raw_range"] = func(s *suite) ceilingRep { return rigRep(s, (*serveRig).rawRep) }
}

const (
	serveRow   = 1 << 20 // bytes per GET: one row of the file
	serveConns = 16
)

// serveRig is the servers of one server figure and the file they serve.
type serveRig struct {
	rows   int64
	file   string // the .npy's name in the suite's directory
	header int64  // its data's offset
	want   []byte // row 0's bytes, to check a response
	srv    *serve.Server
	base   string // http://addr of mmapkit's server
	nbase  string // http://addr of nginx
	// stopNginx stops nginx and removes its files.
	stopNginx func()
	client    *http.Client
	done      chan error
}

// rigs are the rigs of the figures being measured, by suite: the paired
// repetitions find theirs here.
var (
	rigsMu sync.Mutex
	rigs   = map[*suite]*serveRig{}
)

// rigRep is a repetition of the rig of the figure being measured.
func rigRep(s *suite, rep func(*serveRig) (time.Duration, int64, error)) ceilingRep {
	return func() (time.Duration, int64, error) {
		rigsMu.Lock()
		r := rigs[s]
		rigsMu.Unlock()
		if r == nil {
			return 0, 0, errors.New("no servers running")
		}
		return rep(r)
	}
}

// serveFigure starts the servers, measures rep (beside its pairing), and
// stops them.
func (s *suite) serveFigure(rep func(*serveRig) (time.Duration, int64, error)) (float64, int64, error) {
	r, err := s.startRig()
	if err != nil {
		return 0, 0, err
	}
	defer r.stop()
	rigsMu.Lock()
	rigs[s] = r
	rigsMu.Unlock()
	defer func() {
		rigsMu.Lock()
		delete(rigs, s)
		rigsMu.Unlock()
	}()
	// Warm: the page cache, the connections, the store's description.
	for _, warm := range []func(*serveRig) (time.Duration, int64, error){(*serveRig).nginxRep, (*serveRig).rawRep, rep} {
		if _, _, err := warm(r); err != nil {
			return 0, 0, err
		}
	}
	var n int64
	d, err := s.best(func() (time.Duration, error) {
		d, bytes, err := rep(r)
		n = bytes
		return d, err
	})
	if err != nil {
		return 0, 0, err
	}
	return gbps(n, d), n, nil
}

// startRig writes the file (once) and starts both servers on it.
func (s *suite) startRig() (*serveRig, error) {
	nginx, err := exec.LookPath("nginx")
	if err != nil {
		if _, serr := os.Stat("/usr/sbin/nginx"); serr != nil {
			return nil, &notMeasured{"nginx is not installed (Debian: apt-get install nginx-light)"}
		}
		nginx = "/usr/sbin/nginx"
	}
	rows := s.o.Size / serveRow
	if rows < 1 {
		return nil, &notMeasured{"--size below 1 MiB"}
	}
	r := &serveRig{rows: rows, file: "serve.npy"}
	p := s.path(r.file)
	if _, err := os.Stat(p); err != nil {
		if err := npy.Save(p, []int64{rows, serveRow / 8}, layout.RowMajor, s.src[:rows*serveRow/8]); err != nil {
			return nil, err
		}
	}
	fi, err := os.Stat(p)
	if err != nil {
		return nil, err
	}
	r.header = fi.Size() - rows*serveRow
	r.want = asBytes(s.src[:serveRow/8])
	r.client = &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: serveConns, MaxConnsPerHost: serveConns, DisableCompression: true}}

	if r.srv, err = serve.New(s.dir, &serve.Options{MaxConns: 64, Rows: 1}); err != nil {
		return nil, err
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		r.srv.Close()
		return nil, err
	}
	r.base = "http://" + l.Addr().String()
	r.done = make(chan error, 1)
	go func() { r.done <- r.srv.Serve(l) }()
	if err := r.startNginx(nginx, p); err != nil {
		r.stop()
		return nil, err
	}
	return r, nil
}

// nginxConf serves root on 127.0.0.1:port with sendfile, everything it
// writes under prefix, as an unprivileged process in the foreground.
const nginxConf = `daemon off;
worker_processes auto;
pid %[1]s/nginx.pid;
error_log %[1]s/error.log warn;
events { worker_connections 1024; }
http {
    access_log off;
    sendfile on;
    tcp_nopush on;
    keepalive_requests 1000000;
    default_type application/octet-stream;
    client_body_temp_path %[1]s/body;
    proxy_temp_path %[1]s/proxy;
    fastcgi_temp_path %[1]s/fastcgi;
    uwsgi_temp_path %[1]s/uwsgi;
    scgi_temp_path %[1]s/scgi;
    server {
        listen 127.0.0.1:%[2]d;
        root %[3]s;
    }
}
`

// startNginx starts nginx serving file. Its files and the one it serves
// (a hard link to file: the same inode, the same cached pages) lie in a
// directory of their own that anyone may pass through: run by root,
// nginx's workers run as nobody, who may not enter the suite's.
func (r *serveRig) startNginx(bin, file string) error {
	prefix, err := os.MkdirTemp("", "mmapkit-bench-nginx-")
	if err != nil {
		return err
	}
	root := filepath.Join(prefix, "www")
	err = os.Chmod(prefix, 0o755)
	if err == nil {
		err = os.Mkdir(root, 0o755)
	}
	if err == nil {
		err = linkOrCopy(file, filepath.Join(root, filepath.Base(file)))
	}
	if err != nil {
		os.RemoveAll(prefix)
		return err
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return err
	}
	port := l.Addr().(*net.TCPAddr).Port
	l.Close()
	conf := filepath.Join(prefix, "nginx.conf")
	if err := os.WriteFile(conf, []byte(fmt.Sprintf(nginxConf, prefix, port, root)), 0o644); err != nil {
		return err
	}
	var stderr bytes.Buffer
	cmd := exec.Command(bin, "-p", prefix, "-c", conf, "-e", filepath.Join(prefix, "error.log"))
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		os.RemoveAll(prefix)
		return err
	}
	r.nbase = "http://127.0.0.1:" + strconv.Itoa(port)
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	for deadline := time.Now().Add(5 * time.Second); ; {
		select {
		case err := <-exited:
			log, _ := os.ReadFile(filepath.Join(prefix, "error.log"))
			os.RemoveAll(prefix)
			return &notMeasured{fmt.Sprintf("nginx did not start (%v): %s%s", err, stderr.Bytes(), log)}
		default:
		}
		if c, err := net.Dial("tcp", "127.0.0.1:"+strconv.Itoa(port)); err == nil {
			c.Close()
			break
		}
		if time.Now().After(deadline) {
			cmd.Process.Kill()
			<-exited
			os.RemoveAll(prefix)
			return errors.New("nginx did not listen within 5 s")
		}
		time.Sleep(10 * time.Millisecond)
	}
	r.stopNginx = func() {
		cmd.Process.Signal(os.Interrupt) // fast shutdown
		select {
		case <-exited:
		case <-time.After(3 * time.Second):
			cmd.Process.Kill()
			<-exited
		}
		os.RemoveAll(prefix)
	}
	return nil
}

// linkOrCopy hard-links src at dst, or copies it where it cannot (another
// file system).
func linkOrCopy(src, dst string) error {
	if os.Link(src, dst) == nil {
		return nil
	}
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.OpenFile(dst, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}

func (r *serveRig) stop() {
	r.client.CloseIdleConnections()
	if r.stopNginx != nil {
		r.stopNginx()
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
	defer cancel()
	r.srv.Shutdown(ctx)
	if r.done != nil {
		<-r.done
	}
	r.srv.Close()
}

// rawRep GETs every row of the file from mmapkit's /raw/ as a range.
func (r *serveRig) rawRep() (time.Duration, int64, error) {
	return r.fetch(func(k int64) (string, string) {
		return r.base + "/raw/" + r.file, rangeOf(r.header+k*serveRow, serveRow)
	}, http.StatusPartialContent)
}

// nginxRep GETs the same ranges from nginx.
func (r *serveRig) nginxRep() (time.Duration, int64, error) {
	return r.fetch(func(k int64) (string, string) {
		return r.nbase + "/" + r.file, rangeOf(r.header+k*serveRow, serveRow)
	}, http.StatusPartialContent)
}

// zarrRep GETs every row as the chunk of the virtual store.
func (r *serveRig) zarrRep() (time.Duration, int64, error) {
	return r.fetch(func(k int64) (string, string) {
		return r.base + "/zarr/" + r.file + "/0/" + strconv.FormatInt(k, 10) + ".0", ""
	}, http.StatusOK)
}

func rangeOf(off, n int64) string {
	return "bytes=" + strconv.FormatInt(off, 10) + "-" + strconv.FormatInt(off+n-1, 10)
}

// fetch GETs rows 0..rows-1 (url and Range header of each from at) on
// serveConns connections and returns the time and bytes; every response
// must have status want and one row's length, and row 0 its bytes.
func (r *serveRig) fetch(at func(k int64) (string, string), want int) (time.Duration, int64, error) {
	next := make(chan int64, r.rows)
	for k := range r.rows {
		next <- k
	}
	close(next)
	var wg sync.WaitGroup
	errs := make(chan error, serveConns)
	buf := make([][]byte, serveConns)
	start := time.Now()
	for c := range serveConns {
		buf[c] = make([]byte, serveRow)
		wg.Add(1)
		go func() {
			defer wg.Done()
			for k := range next {
				if err := r.get(at, k, want, buf[c]); err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	wg.Wait()
	d := time.Since(start)
	close(errs)
	if err := <-errs; err != nil {
		return 0, 0, err
	}
	return d, r.rows * serveRow, nil
}

func (r *serveRig) get(at func(k int64) (string, string), k int64, want int, buf []byte) error {
	url, rng := at(k)
	req, err := http.NewRequest(http.MethodGet, url, nil)
	if err != nil {
		return err
	}
	if rng != "" {
		req.Header.Set("Range", rng)
	}
	resp, err := r.client.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != want || resp.ContentLength != serveRow {
		body, _ := io.ReadAll(io.LimitReader(resp.Body, 512))
		return fmt.Errorf("GET %s (%s): %s of %d bytes, want %d of %d: %s", url, rng, resp.Status, resp.ContentLength, want, serveRow, body)
	}
	n, err := io.ReadFull(resp.Body, buf)
	if err != nil || n != serveRow {
		return fmt.Errorf("GET %s (%s): %d bytes of %d: %v", url, rng, n, serveRow, err)
	}
	if k == 0 && !bytes.Equal(buf, r.want) {
		return fmt.Errorf("GET %s (%s): not the file's bytes", url, rng)
	}
	return nil
}
