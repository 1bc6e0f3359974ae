package h5

// GlobalHeap is one global heap collection ("GCOL"): the objects variable-length data
// points at, by collection address and object index.
type GlobalHeap struct {
	At      int64             // absolute offset of the collection
	objects map[uint16][]byte // index -> data (aliasing the collection's bytes)
}

// globalHeapHeader is the collection header before its length field.
const globalHeapHeader = 8

// align8 rounds n up to a multiple of 8: the library pads the collection header and
// each object header so (with 4-byte lengths, a length field and 4 bytes of padding).
func align8(n int) int { return (n + 7) &^ 7 }

// ReadGlobalHeap reads the collection at addr and indexes its objects, so that a caller
// reading many variable-length elements reads each collection once.
func (r *Reader) ReadGlobalHeap(addr uint64) (*GlobalHeap, error) {
	head, abs, err := r.block(addr, uint64(align8(globalHeapHeader+r.LengthSize)), "GCOL", false)
	if err != nil {
		return nil, err
	}
	d := r.decoder(head, abs)
	d.skip(4, "signature")
	if v := d.u8("global heap version"); v != 1 {
		return nil, errorf(abs+4, "global heap version %d, want 1", v)
	}
	d.skip(3, "reserved")
	size := d.length("collection size")
	d.skip(len(head)-globalHeapHeader-r.LengthSize, "header padding")
	if d.err != nil {
		return nil, d.err
	}
	if size < uint64(len(head)) || size > r.available(addr) {
		return nil, errorf(abs+8, "global heap collection size %d does not fit between its header and the end of the file", size)
	}
	b, _, err := r.read(addr, size, "global heap collection")
	if err != nil {
		return nil, err
	}
	h := &GlobalHeap{At: abs, objects: map[uint16][]byte{}}
	d = r.decoder(b, abs)
	d.skip(len(head), "collection header")
	objHeader := align8(8 + r.LengthSize)
	for len(b)-d.pos >= objHeader {
		at := d.offset()
		index := d.u16("heap object index")
		d.skip(6, "reference count and reserved")
		n := d.length("heap object size")
		d.skip(objHeader-8-r.LengthSize, "heap object header padding")
		if index == 0 {
			break // free space: the rest of the collection
		}
		if n > uint64(len(b)-d.pos) {
			return nil, errorf(at, "global heap object %d of %d bytes overruns its collection", index, n)
		}
		data := d.take(int(n), "heap object")
		if pad := (8 - int(n)%8) % 8; pad <= len(b)-d.pos {
			d.skip(pad, "heap object padding")
		} else {
			d.pos = len(b)
		}
		if _, dup := h.objects[index]; dup {
			return nil, errorf(at, "global heap object %d appears twice", index)
		}
		h.objects[index] = data
	}
	if d.err != nil {
		return nil, d.err
	}
	return h, nil
}

// Object returns the data of object index, or an error naming the collection.
func (h *GlobalHeap) Object(index uint32) ([]byte, error) {
	if index > 0xffff {
		return nil, errorf(h.At, "global heap object index %d exceeds 65535", index)
	}
	data, ok := h.objects[uint16(index)]
	if !ok {
		return nil, errorf(h.At, "global heap collection has no object %d", index)
	}
	return data, nil
}

// GlobalHeapObject returns object index of the global heap collection at addr.
func (r *Reader) GlobalHeapObject(addr uint64, index uint32) ([]byte, error) {
	h, err := r.ReadGlobalHeap(addr)
	if err != nil {
		return nil, err
	}
	return h.Object(index)
}
