package hdf5

import (
	"encoding/binary"
	"fmt"
	"strconv"
	"strings"

	"github.com/mmapkit/mmapkit/format"
	"github.com/mmapkit/mmapkit/layout"
)

// This file is the writer's netCDF-4 output: dimension scales, as
// netCDF-C writes them, so that netCDF readers and xarray see named
// dimensions.

// dimension is one netCDF dimension of a group: a dimension scale
// dataset of its length, and the variables' axes that use it.
type dimension struct {
	id     int
	length int64
	scale  *wnode
	users  []dimUse
}

// dimUse is one axis of a variable along a dimension.
type dimUse struct {
	v    *wnode
	axis int
}

// ncState is what the netCDF attributes need: the dimensions, and the
// global heap collection holding each variable axis's DIMENSION_LIST
// entry (one object reference each).
type ncState struct {
	dims    []*dimension
	objects []*wnode // heap object k+1 references objects[k], a scale
	gcol    int64    // the collection's address
}

// addDimensions gives every dataset's axes a dimension of its group: dim_<i>
// where the group's dim_<i> has that length or does not exist yet, else
// <dataset>_dim_<i>; each dimension is a scale dataset of its own, listed
// in the group before the variables.
func addDimensions(g *wnode, st *ncState) error {
	var scales []*wnode
	byName := map[string]*dimension{}
	for _, v := range g.children {
		if v.isGroup() {
			if err := addDimensions(v, st); err != nil {
				return err
			}
			continue
		}
		for axis, length := range v.shape {
			var d *dimension
			cands := []string{"dim_" + strconv.Itoa(axis), v.name + "_dim_" + strconv.Itoa(axis)}
			if axis < len(v.srcDims) && len(v.srcDims) == len(v.shape) && validLinkName(v.srcDims[axis]) {
				cands = append([]string{v.srcDims[axis]}, cands...)
			}
			for _, name := range cands {
				if c := byName[name]; c != nil {
					if c.length == length {
						d = c
						break
					}
					continue
				}
				if c := g.byName[name]; c != nil {
					// A 1-D dataset of the dimension's name and length is
					// its coordinate variable, the scale itself.
					if c.isGroup() || len(c.shape) != 1 || c.shape[0] != length || c.dim != nil {
						continue
					}
					d = &dimension{id: len(st.dims), length: length, scale: c}
					c.dim = d
				} else {
					d = &dimension{id: len(st.dims), length: length}
					d.scale = &wnode{name: name, rec: scaleOnly, data: -1, level: -1, shape: []int64{length}, nbytes: 4 * length, elemSize: 4,
						fullPath: strings.TrimSuffix(g.fullPath, "/") + "/" + name, typ: appendFloat(nil, layout.F32, 0), dim: d}
					scales = append(scales, d.scale)
				}
				byName[name] = d
				st.dims = append(st.dims, d)
				break
			}
			if d == nil {
				return fmt.Errorf("%w: %s: no name is free for its dimension %d", format.ErrNotRepresentable, v.fullPath, axis)
			}
			if len(d.users) == maxDimUsers {
				return fmt.Errorf("%w: %s: more than %d variables use the dimension %s", format.ErrNotRepresentable, v.fullPath, maxDimUsers, d.scale.name)
			}
			if d.scale == v {
				continue // a coordinate variable is its own dimension
			}
			d.users = append(d.users, dimUse{v, axis})
			v.dims = append(v.dims, d)
			if len(st.objects) == maxHeapObjects {
				return fmt.Errorf("%w: more than %d dimensions of variables", format.ErrNotRepresentable, maxHeapObjects)
			}
			v.heapIndex = append(v.heapIndex, len(st.objects)+1)
			st.objects = append(st.objects, d.scale)
		}
	}
	if len(g.children)+len(scales) > maxCompactLinks {
		return fmt.Errorf("%w: the group %s would have more than %d links", format.ErrNotRepresentable, g.fullPath, maxCompactLinks)
	}
	g.children = append(scales, g.children...)
	return nil
}

// scaleOnly is the record number of a dimension scale that is no
// variable: a dataset without storage.
const scaleOnly = -2

// validLinkName reports whether a source's dimension name can name a
// link.
func validLinkName(s string) bool {
	return s != "" && s != "." && s != ".." && !strings.Contains(s, "/")
}

// maxDimUsers bounds the axes using one dimension: its REFERENCE_LIST
// (16 bytes each) must fit a header message's 16-bit size.
const maxDimUsers = 4000

// gcolSize is the size of the collection of n object references.
func gcolSize(n int) int64 {
	return max(gcolMinSize, 16+(16+8)*int64(n)+16)
}

// appendGCOL appends the global heap collection: object k+1 is the
// address of objects[k]'s header; the rest is free space (object 0).
func (st *ncState) appendGCOL(b []byte) []byte {
	var c heapCollection
	c.reset()
	for _, o := range st.objects {
		c.add(string(binary.LittleEndian.AppendUint64(nil, uint64(o.addr))))
	}
	return append(b, c.finish()...)
}

// appendAttribute appends a version 3 attribute message.
func appendAttribute(b []byte, name string, typ, space, data []byte) []byte {
	le := binary.LittleEndian
	b = append(b, 3, 0)
	b = le.AppendUint16(b, uint16(len(name)+1))
	b = le.AppendUint16(b, uint16(len(typ)))
	b = le.AppendUint16(b, uint16(len(space)))
	b = append(b, 0) // ASCII name
	b = append(b, name...)
	b = append(b, 0)
	b = append(b, typ...)
	b = append(b, space...)
	return append(b, data...)
}

// fixedString is the datatype of a null-terminated ASCII string of size
// bytes.
func fixedString(size int) []byte {
	return binary.LittleEndian.AppendUint32([]byte{0x13, 0, 0, 0}, uint32(size))
}

// objectReference is the datatype of an object reference.
var objectReference = []byte{0x17, 0, 0, 0, 8, 0, 0, 0}

// ncAttributes are the attribute messages of a scale or a variable.
func (n *wnode) ncAttributes(st *ncState) [][]byte {
	le := binary.LittleEndian
	scalar := appendDataspace(nil, nil)
	var out [][]byte
	if d := n.dim; d != nil {
		out = append(out, appendAttribute(nil, "CLASS", fixedString(16), scalar, []byte("DIMENSION_SCALE\x00")))
		text := n.name
		if n.rec == scaleOnly {
			text = fmt.Sprintf("This is a netCDF dimension but not a netCDF variable.%10d", d.length)
		}
		out = append(out, appendAttribute(nil, "NAME", fixedString(len(text)+1), scalar, append([]byte(text), 0)))
		refType := []byte{0x36, 2, 0, 0, 16, 0, 0, 0}
		refType = append(refType, "dataset\x00"...)
		refType = append(refType, 0)
		refType = append(refType, objectReference...)
		refType = append(refType, "dimension\x00"...)
		refType = append(refType, 8)
		refType = appendFixed(refType, 4, 0, true)
		var refs []byte
		for _, u := range d.users {
			refs = le.AppendUint64(refs, uint64(u.v.addr))
			refs = le.AppendUint32(refs, uint32(u.axis))
			refs = append(refs, 0, 0, 0, 0)
		}
		out = append(out, appendAttribute(nil, "REFERENCE_LIST", refType, appendDataspace(nil, []int64{int64(len(d.users))}), refs))
		out = append(out, appendAttribute(nil, "_Netcdf4Dimid", appendFixed(nil, 4, 0, true), scalar, le.AppendUint32(nil, uint32(d.id))))
		return out
	}
	if len(n.dims) == 0 {
		return nil
	}
	vlen := append([]byte{0x19, 0, 0, 0, 16, 0, 0, 0}, objectReference...)
	var list []byte
	for _, k := range n.heapIndex {
		list = le.AppendUint32(list, 1)
		list = le.AppendUint64(list, uint64(st.gcol))
		list = le.AppendUint32(list, uint32(k))
	}
	return append(out, appendAttribute(nil, "DIMENSION_LIST", vlen, appendDataspace(nil, []int64{int64(len(n.dims))}), list))
}
