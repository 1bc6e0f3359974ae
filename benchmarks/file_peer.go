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

// peerMain times load(path, key).sum() and prints the best time.
const peerMain = `
import time
def main():
    p, k, budget, cold, most = sys.argv[1], sys.argv[2], float(sys.argv[3]), sys.argv[4] == "1", int(sys.argv[5])
    best, n, start, runs = None, 0, time.perf_counter(), 0
    while True:
        t = time.perf_counter()
        a = load(p, k)
        a.sum()
        t = time.perf_counter() - t
        n = int(a.size)
        runs += 1
        if not cold and runs == 1:
            continue  # the first read settles the cache
        best = t if best is None or t < best else best
        if cold or runs > most or (runs >= 2 and time.perf_counter() - start > budget):
            break
    print(json.dumps({"t": best, "n": n}))
main()
`

// peer measures the peer's read, warm or cold; the peer is stopped when
// the run's time is up.
func (b *fileBench) peer(path string, p *filePeer, nbytes int64, cold bool) (FileFigure, error) {
	fig := FileFigure{Way: WayPeer, Cold: cold, Unit: GBps, Ceiling: p.tool}
	per, err := b.slot()
	if err != nil {
		return fig, b.unmeasured(&fig, err)
	}
	py := b.o.python
	if py == "" {
		py = oracle.Find(p.module)
	}
	if py == "" {
		fig.Note = fmt.Sprintf("not measured: no python3 here imports %s", p.module)
		return fig, nil
	}
	if cold {
		note, err := b.makeCold(path)
		if err != nil {
			return fig, b.unmeasured(&fig, err)
		}
		fig.Note = note
	}
	coldArg := "0"
	if cold {
		coldArg = "1"
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		return fig, err
	}
	ctx, cancel := context.WithTimeout(b.ctx, b.deadline.Sub(b.now()))
	defer cancel()
	cmd := exec.CommandContext(ctx, py, "-c", p.script, abs, p.name, strconv.FormatFloat(per.Seconds(), 'f', 3, 64), coldArg, strconv.Itoa(b.o.maxRuns))
	cmd.Dir = os.TempDir() // not the working directory, whose zarr/ would be imported as zarr
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err := b.ctx.Err(); err != nil {
		return fig, err
	}
	if ctx.Err() != nil {
		fig.Note = "not measured: stopped when the time (--time) ran out"
		return fig, nil
	}
	if err != nil {
		// The user's tool cannot read the file (a Zarr v3 store and
		// zarr-python 2): a figure that does not exist, not a failed run.
		lines := strings.Split(strings.TrimSpace(stderr.String()), "\n")
		fig.Note = fmt.Sprintf("not measured: %s cannot read it: %s", p.tool, lines[len(lines)-1])
		return fig, nil
	}
	var r struct {
		T     float64 `json:"t"`
		N     int64   `json:"n"`
		Error string  `json:"error"`
	}
	if err := json.Unmarshal(out, &r); err != nil {
		return fig, fmt.Errorf("%s printed %q: %v", py, out, err)
	}
	if r.Error != "" {
		fig.Note = "not measured: " + r.Error
		return fig, nil
	}
	if r.N != p.elems || r.T <= 0 {
		return fig, fmt.Errorf("%s read %d elements of %s in %vs, want %d", p.tool, r.N, path, r.T, p.elems)
	}
	fig.Value = gbps(nbytes, time.Duration(r.T*1e9))
	return fig, nil
}
