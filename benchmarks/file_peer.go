package benchmarks

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/mmapkit/mmapkit/format"
	"github.com/mmapkit/mmapkit/internal/oracle"
	"github.com/mmapkit/mmapkit/layout"
)

// A peer is the tool a user of the format would read the record with
// instead: a Python script that times its own reads (the best of as many
// as its share of time allows, or one cold read) and prints
// {"t": seconds, "n": elements}.
type filePeer struct {
	tool   string // what the figure's ceiling column names
	module string // what the interpreter must import
	script string // reads sys.argv[1] (path), [2] (record name)
	name   string
	elems  int64
}

// peerScripts read the whole record and sum it, as a user of each tool
// would; load(p, k) returns what .sum() is called on.
var peerScripts = map[string]struct{ tool, module, imp, load string }{
	"npy": {"numpy.load(mmap_mode=\"r\").sum()", "numpy", "import numpy as np", `
def load(p, k):
    return np.load(p, mmap_mode="r")
`},
	"npz": {"numpy.load(npz)[key].sum()", "numpy", "import numpy as np", `
def load(p, k):
    with np.load(p) as z:
        if k not in z.files and k.endswith(".npy"):
            k = k[:-4]
        return z[k]
`},
	// A table's column is "<dataset>/<member>": the field of the dataset.
	"hdf5": {"h5py ds[:].sum()", "h5py", "import h5py", `
def load(p, k):
    with h5py.File(p, "r") as f:
        if k in f:
            ds = f[k]
            return ds[()] if ds.shape == () else ds[:]
        table, field = k.rsplit("/", 1)
        return f[table or "/"][field]
`},
	"zarr": {"zarr-python z[:].sum()", "zarr", "import zarr", `
def load(p, k):
    z = zarr.open(p, mode="r")
    if not hasattr(z, "dtype"):
        z = z[k.strip("/")]
    return z[...]
`},
}

// peerFor returns the peer of record rec of f, or nil where the format has
// none or no interpreter here has its module.
func (b *fileBench) peerFor(path string, f format.File, rec format.Record) *filePeer {
	kind := f.Format()
	if kind == "npy" && isZip(path) {
		kind = "npz"
	}
	ps, ok := peerScripts[kind]
	if !ok {
		return nil
	}
	n, err := layout.Count(rec.Shape)
	if err != nil {
		return nil
	}
	script := "import sys, json\n" + pyImport(ps.imp, ps.module) + ps.load + peerMain
	return &filePeer{tool: ps.tool, module: ps.module, script: script, name: rec.Name, elems: n}
}

func isZip(path string) bool {
	f, err := os.Open(path)
	if err != nil {
		return false
	}
	defer f.Close()
	var magic [4]byte
	_, err = f.ReadAt(magic[:], 0)
	return err == nil && string(magic[:]) == "PK\x03\x04"
}

// peerMain times load(path, key).sum(): once cold (the bench dropped
// the file's pages before it started the interpreter, which reads
// nothing of the file before), then warm, the best of as many reads as
// fit before the deadline (seconds since the epoch), at least one. It
// prints each time on a line of its own as soon as it has it, so that
// the cold figure outlives an interpreter stopped during the warm reads.
const peerMain = `
import time
def main():
    p, k, deadline, most = sys.argv[1], sys.argv[2], float(sys.argv[3]), int(sys.argv[4])
    def once():
        t = time.perf_counter()
        a = load(p, k)
        a.sum()
        return time.perf_counter() - t, int(a.size)
    cold, n = once()
    print(json.dumps({"cold": cold, "n": n}), flush=True)
    best, runs = None, 0
    while runs < most:
        t, n = once()
        runs += 1
        best = t if best is None or t < best else best
        if time.time() + t > deadline:
            break  # the next read would end after it
    print(json.dumps({"t": best, "n": n}), flush=True)
main()
`

// peer measures the peer's read cold, then warm, in one run of the
// interpreter, which is stopped when the record's share of the time is
// spent. It returns the two figures, cold first.
func (b *fileBench) peer(path string, p *filePeer, nbytes int64) ([]FileFigure, error) {
	cold := FileFigure{Way: WayPeer, Cold: true, Unit: GBps, Ceiling: p.tool}
	warm := cold
	warm.Cold = false
	figs := []FileFigure{cold, warm}
	note := func(s string) ([]FileFigure, error) {
		figs[0].Note, figs[1].Note = s, s
		return figs, nil
	}
	// Last: the rest of the record's share is the peer's.
	if !b.now().Before(b.recEnd) {
		return note(outOfTime.Error())
	}
	py := b.o.python
	if py == "" {
		py = oracle.Find(p.module)
	}
	if py == "" {
		return note(fmt.Sprintf("not measured: no python3 here imports %s", p.module))
	}
	kept, err := b.makeCold(path)
	figs[0].Note = kept
	if err := b.unmeasured(&figs[0], err); err != nil {
		return nil, err
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, err
	}
	left := b.recEnd.Sub(b.now())
	ctx, cancel := context.WithTimeout(b.ctx, left)
	defer cancel()
	// The interpreter's own deadline comes before the one it is stopped
	// at, leaving it the time to print its last line and exit.
	deadline := float64(time.Now().Add(left*9/10).UnixNano()) / 1e9
	cmd := exec.CommandContext(ctx, py, "-c", p.script, abs, p.name, strconv.FormatFloat(deadline, 'f', 3, 64), strconv.Itoa(b.o.maxRuns))
	cmd.Dir = os.TempDir() // not the working directory, whose zarr/ would be imported as zarr
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err := b.ctx.Err(); err != nil {
		return nil, err
	}
	stopped := ctx.Err() != nil
	if err != nil && !stopped {
		// The user's tool cannot read the file (a Zarr v3 store and
		// zarr-python 2): a figure that does not exist, not a failed run.
		lines := strings.Split(strings.TrimSpace(stderr.String()), "\n")
		return note(fmt.Sprintf("not measured: %s cannot read it: %s", p.tool, lines[len(lines)-1]))
	}
	// A line for each read it finished: cold, then warm.
	got := 0
	for line := range strings.Lines(string(out)) {
		var r struct {
			Cold  float64 `json:"cold"`
			T     float64 `json:"t"`
			N     int64   `json:"n"`
			Error string  `json:"error"`
		}
		if err := json.Unmarshal([]byte(line), &r); err != nil {
			return nil, fmt.Errorf("%s printed %q: %v", py, line, err)
		}
		if r.Error != "" {
			return note("not measured: " + r.Error)
		}
		if r.N != p.elems || r.T < 0 || r.Cold < 0 || r.T+r.Cold <= 0 {
			return nil, fmt.Errorf("%s read %d elements of %s in %vs (cold %vs), want %d", p.tool, r.N, path, r.T, r.Cold, p.elems)
		}
		if r.Cold > 0 && !strings.HasPrefix(figs[0].Note, "not measured") {
			figs[0].Value = gbps(nbytes, time.Duration(r.Cold*1e9))
		}
		if r.T > 0 {
			figs[1].Value = gbps(nbytes, time.Duration(r.T*1e9))
		}
		got++
	}
	if stopped {
		for k := got; k < 2; k++ {
			figs[k].Note = "not measured: stopped when the time (--time) ran out"
		}
	}
	return figs, nil
}
