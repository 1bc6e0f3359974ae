package zarr

import (
	"errors"
	"runtime"
	"sort"
	"sync"

	"github.com/mmapkit/mmapkit/layout"
)

// unitRef names one stored unit: its file and, in a shard, its place in
// the shard's index (-1 otherwise).
type unitRef struct {
	key   string
	inner int64
}

// salvage checks every stored chunk of every array (Options.Salvage):
// the chunks that do not decode are noted in s.damaged, so that copying
// reads give the fill value in their place, and their errors in
// s.damage, in the order of the arrays and of their chunks (C order),
// each error once.
func (s *Store) salvage() {
	seen := map[string]bool{}
	for i := range s.arrays {
		a := s.array(i, false)
		if !a.m.dt.typ.Valid() {
			continue // never read: nothing to salvage
		}
		g := a.m.unitGrid()
		total, err := layout.Count(g)
		if err != nil || total == 0 {
			continue
		}
		type bad struct {
			j   int64
			ref unitRef
			err error
		}
		var mu sync.Mutex
		var found []bad
		withWorkers(total, int64(runtime.GOMAXPROCS(0)), &s.states, func(j int64, w *worker) error {
			u := make([]int64, len(g))
			for i, k := len(g)-1, j; i >= 0; i-- {
				u[i] = k % g[i]
				k /= g[i]
			}
			if err := a.checkUnit(u, w); err != nil {
				key, inner := a.m.locate(u)
				mu.Lock()
				found = append(found, bad{j, unitRef{key, inner}, err})
				mu.Unlock()
			}
			return nil
		})
		sort.Slice(found, func(x, y int) bool { return found[x].j < found[y].j })
		for _, b := range found {
			if s.damaged == nil {
				s.damaged = map[unitRef]bool{}
			}
			s.damaged[b.ref] = true
			if msg := b.err.Error(); !seen[msg] { // a shard's index fails for each of its chunks
				seen[msg] = true
				s.damage = append(s.damage, b.err)
			}
		}
	}
}

// checkUnit reads unit u as a copying read would and returns the error
// that read would give: a chunk of the wrong size, one that does not
// decompress or fails its checksum, a shard whose index is damaged.
func (a *Array) checkUnit(u []int64, w *worker) error {
	loc, err := a.locateUnit(u)
	if err != nil || loc.missing {
		return err
	}
	ub := a.m.unitBytes()
	if len(a.m.chain) == 0 {
		if loc.n != ub {
			return a.sizeErr(loc, ub)
		}
		return nil
	}
	if ub > maxDecoded {
		return nil // read straight into destinations, never decoded apart
	}
	w.scratch = grow(w.scratch, ub)
	return a.readUnitRaw(loc, w.scratch, w)
}

// isDamaged reports whether unit u was found damaged by Options.Salvage.
func (a *Array) isDamaged(u []int64) bool {
	if a.s.damaged == nil {
		return false
	}
	key, inner := a.m.locate(u)
	return a.s.damaged[unitRef{key, inner}]
}

// Damage reports what Options.Salvage found: one error for each chunk
// (or shard index) that does not decode, naming its key and byte offset,
// joined (errors.As finds the first; errors.Is any), or nil when every
// chunk decodes. Copying reads give the fill value in those chunks'
// place.
func (s *Store) Damage() error { return errors.Join(s.damage...) }
