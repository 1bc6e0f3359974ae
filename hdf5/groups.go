package hdf5

import (
	"errors"
	"sort"

	"github.com/mmapkit/mmapkit/mmapfile"
)

// groupLinks returns the links of the group whose header is oh, sorted by
// the bytes of their names: the entries of an old-style group's symbol
// table, or a new-style group's link messages (in its header, or in its
// fractal heap when dense).
func groupLinks(m *meta, oh *objectHeader) ([]link, error) {
	var links []link
	if msg := oh.find(msgSymbolTable); msg != nil {
		st, err := parseSymbolTable(m, msg)
		if err != nil {
			return nil, err
		}
		if links, err = symbolTableLinks(m, st); err != nil {
			return nil, err
		}
	} else {
		for i := range oh.msgs {
			msg := &oh.msgs[i]
			if msg.typ != msgLink {
				continue
			}
			l, err := parseLink(m, msg.body, msg.at)
			if err != nil {
				return nil, err
			}
			links = append(links, l)
		}
		if msg := oh.find(msgLinkInfo); msg != nil {
			li, err := parseDenseIndex(m, msg, 8)
			if err != nil {
				return nil, err
			}
			if !m.undefined(li.heap) && !m.undefined(li.nameIndex) {
				dense, err := denseLinks(m, li)
				if err != nil {
					return nil, err
				}
				links = append(links, dense...)
			}
		}
	}
	sort.SliceStable(links, func(i, j int) bool { return links[i].name < links[j].name })
	for i := 1; i < len(links); i++ {
		if links[i].name == links[i-1].name {
			return nil, m.errf(links[i].at, nil, "group at offset %d: two links named %q", oh.at, links[i].name)
		}
	}
	return links, nil
}

// symbolTableLinks reads an old-style group: the symbol table nodes its
// v1 B-tree lists, their entries' names from the local heap.
func symbolTableLinks(m *meta, st symbolTable) ([]link, error) {
	heap, err := readLocalHeap(m, st.heap)
	if err != nil {
		return nil, err
	}
	nodes, err := m.r.GroupBTree(st.btree)
	if err != nil {
		return nil, wrapErr(m.name, -1, err, "group B-tree")
	}
	var links []link
	entrySize := uint64(2*m.so + 8 + 16)
	for _, addr := range nodes {
		head, at, err := m.read(addr, 8, "symbol table node")
		if err != nil {
			return nil, err
		}
		if string(head[:4]) != "SNOD" {
			return nil, m.errf(at, nil, "symbol table node: no SNOD signature")
		}
		n := uint64(le.Uint16(head[6:]))
		body, bat, err := m.read(addr+8, n*entrySize, "symbol table node entries")
		if err != nil {
			return nil, err
		}
		c := m.cursor(body, bat, "symbol table entry")
		for k := uint64(0); k < n; k++ {
			e, err := parseEntry(c)
			if err != nil {
				return nil, err
			}
			name, err := heap.str(m, e.nameOff)
			if err != nil {
				return nil, err
			}
			l := link{name: name, order: -1, at: e.at, addr: e.header}
			if e.cache == 2 {
				// A soft link: the scratch pad holds its value's offset
				// in the local heap.
				l.typ = linkSoft
				if l.target, err = heap.str(m, uint64(le.Uint32(e.scratch))); err != nil {
					return nil, err
				}
			}
			if l.name == "" {
				return nil, m.errf(e.at, nil, "symbol table entry with an empty name")
			}
			links = append(links, l)
		}
	}
	return links, nil
}

// denseLinks reads the links of a group whose link messages live in a
// fractal heap, through the name index v2 B-tree (record type 5: the
// name's hash, then the heap ID).
func denseLinks(m *meta, li denseIndex) ([]link, error) {
	heap, err := m.r.FractalHeap(li.heap)
	if err != nil {
		return nil, wrapErr(m.name, -1, err, "link heap")
	}
	var links []link
	err = m.r.BTree2(li.nameIndex, func(typ uint8, rec []byte) error {
		if typ != 5 {
			return m.errf(-1, errors.ErrUnsupported, "link name index of record type %d (5 expected)", typ)
		}
		if len(rec) < 4+heap.IDLen() {
			return m.errf(-1, mmapfile.ErrTruncated, "link name index record of %d bytes", len(rec))
		}
		obj, err := heap.Object(rec[4 : 4+heap.IDLen()])
		if err != nil {
			return err
		}
		// A heap object's bytes have no file offset of their own: errors
		// in one name the heap.
		at, _ := m.abs(li.heap, 0, "link heap")
		l, err := parseLink(m, obj, at)
		if err != nil {
			return err
		}
		links = append(links, l)
		if len(links) > int(m.r.End) {
			return m.errf(at, ErrCycle, "more links than the file has bytes")
		}
		return nil
	})
	if err != nil {
		return nil, wrapErr(m.name, -1, err, "dense links")
	}
	return links, nil
}

// denseAttributes reads the attribute messages of an object whose
// attributes live in a fractal heap (record type 8 of the name index:
// heap ID, flags, creation order, hash).
func denseAttributes(m *meta, ai denseIndex, shared func(*message) (*dtype, error)) ([]*attribute, error) {
	heap, err := m.r.FractalHeap(ai.heap)
	if err != nil {
		return nil, wrapErr(m.name, -1, err, "attribute heap")
	}
	at, _ := m.abs(ai.heap, 0, "attribute heap")
	var out []*attribute
	err = m.r.BTree2(ai.nameIndex, func(typ uint8, rec []byte) error {
		if typ != 8 {
			return m.errf(at, errors.ErrUnsupported, "attribute name index of record type %d (8 expected)", typ)
		}
		if len(rec) < 8 {
			return m.errf(at, mmapfile.ErrTruncated, "attribute name index record of %d bytes", len(rec))
		}
		obj, err := heap.Object(rec[:8])
		if err != nil {
			return err
		}
		a, err := parseAttribute(m, obj, at, shared)
		if err != nil {
			return err
		}
		out = append(out, a)
		return nil
	})
	if err != nil {
		return nil, wrapErr(m.name, -1, err, "dense attributes")
	}
	return out, nil
}
