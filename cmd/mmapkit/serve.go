package main

import (
	"context"
	"fmt"
	"net"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/mmapkit/mmapkit/format"
	"github.com/mmapkit/mmapkit/serve"
	"github.com/spf13/cobra"
)

func init() { extraCommands = append(extraCommands, newServeCmd) }

// drainTime is how long responses in flight may finish after SIGINT or
// SIGTERM.
const drainTime = 3 * time.Second

func newServeCmd(e *env) *cobra.Command {
	var addr string
	var maxConns int
	var logReqs bool
	var base string
	var rows int64
	var params paramFlags
	cmd := &cobra.Command{
		Use:   "serve [--addr HOST:PORT] [--max-conns N] [--chunks ROWS] [--url BASE] [--log] DIR",
		Short: "Serve the files of a directory read-only over HTTP: bytes, Zarr stores, reference sets",
		Long: `serve answers GET and HEAD on three routes, so that fsspec, zarr-python, xarray and dask on
other machines read the files of DIR where they lie, without a copy or a conversion:

  /raw/F          the bytes of the regular file DIR/F
  /zarr/F/KEY     any file mmapkit reads (or a Zarr store) as a Zarr v2 store: .zgroup, .zattrs,
                  .zarray, consolidated .zmetadata, and chunks, each the bytes of its range of F
                  read at request time (mmapkit refs --chunks ROWS F says which); a missing
                  chunk is 404; records that are no range of F (text, deflated members,
                  CSV columns) are arrays too, their chunks read and sent when asked for
  /refs/F.json    mmapkit refs F, its targets on this server's /raw/ route (--url BASE, else
                  http:// and the request's Host)

Every answer has single and multiple ranges, strong ETags from the file's identity,
Last-Modified, If-None-Match, If-Modified-Since and If-Range, never compressed. Any other method
is 405. F may lie in subdirectories; SciDB files are described with --scidb-format, which applies
to every .scidb file.

Nothing outside DIR is served: a path is percent-decoded once, an empty, "." or ".." segment is
403, and so is a symbolic link that leads out of DIR (one inside it is followed). Directories,
FIFOs and devices are 404. Each response comes from one open descriptor by sendfile, never from a
mapping: a file renamed over mid-response leaves that response all old, and a file truncated under
it cuts the response short without harming the server.

It listens on 127.0.0.1:8080 by default (--addr; port 0 takes any free port; an empty host or
0.0.0.0 listens on every interface, with a warning), serves at most --max-conns connections at once
(the rest wait their turn), drops a client whose request header takes over 10 s or who takes no
bytes for 60 s, and prints one line when it starts. SIGINT or SIGTERM stops it: responses in flight
get 3 s to finish, then it exits 0. --log prints one line per request on stderr: method, path,
status, bytes sent, duration.`,
		Example: `  mmapkit serve /data
  mmapkit serve --addr 0.0.0.0:9000 --url http://data.example.org:9000 --log /data
  curl -r 0-1023 http://127.0.0.1:8080/raw/x.npy | xxd | head
  python3 -c 'import xarray as xr; print(xr.open_zarr("http://127.0.0.1:8080/zarr/x.npy/"))'`,
		Args: exactArgs(1, "DIR"),
		RunE: func(cmd *cobra.Command, args []string) error {
			dir := args[0]
			o := &serve.Options{MaxConns: maxConns, URL: base, Rows: rows, Format: &format.Options{Params: params.given()}}
			if rows < 0 {
				return usageErr("serve: --chunks %d is negative", rows)
			}
			if logReqs {
				o.Log = e.stderr
			}
			srv, err := serve.New(dir, o)
			if err != nil {
				return fileErr(dir, err)
			}
			defer srv.Close()
			l, err := net.Listen("tcp", addr)
			if err != nil {
				return fileErr(addr, fmt.Errorf("cannot listen: %w", err))
			}
			if host, _, err := net.SplitHostPort(addr); err == nil && (host == "" || host == "0.0.0.0" || host == "::") {
				fmt.Fprintf(e.stderr, "mmapkit: warning: %s listens on every interface: anyone who can reach this machine can read %s\n", addr, dir)
			}
			// These signals are the server's to handle from here on: they
			// stop it cleanly instead of ending the process at once.
			signal.Reset(os.Interrupt, syscall.SIGTERM)
			ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
			defer stop()
			fmt.Fprintf(e.stderr, "mmapkit: serving %s on http://%s/ (read-only; %s)\n", dir, l.Addr(), serve.Routes)
			done := make(chan error, 1)
			go func() { done <- srv.Serve(l) }()
			select {
			case err := <-done:
				return fileErr(addr, err)
			case <-ctx.Done():
			}
			sctx, cancel := context.WithTimeout(context.Background(), drainTime)
			defer cancel()
			srv.Shutdown(sctx)
			return fileErr(addr, <-done)
		},
	}
	cmd.Flags().StringVar(&addr, "addr", "127.0.0.1:8080", "address to listen on, HOST:PORT (port 0: any free port)")
	cmd.Flags().IntVar(&maxConns, "max-conns", 64, "connections served at once; more wait their turn")
	cmd.Flags().BoolVar(&logReqs, "log", false, "one line per request on stderr")
	cmd.Flags().StringVar(&base, "url", "", "where clients reach this server, for the targets of /refs/ (default: http:// and the request's Host)")
	cmd.Flags().Int64Var(&rows, "chunks", 0, "slices of a contiguous array's slowest axis per chunk, at most (0: 64 MiB worth)")
	params = addParams(cmd, false)
	return cmd
}
