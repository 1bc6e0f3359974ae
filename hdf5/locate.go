package hdf5

import (
	"encoding/json"
	"slices"

	"github.com/mmapkit/mmapkit/format"
	"github.com/mmapkit/mmapkit/hdf5/internal/h5"
	"github.com/mmapkit/mmapkit/layout"
)

// hiddenAttributes are the attributes of the HDF5 dimension-scale and
// netCDF-4 conventions, which say what the reference set says otherwise
// (dimension names) or hold object references: left out, as netCDF and
// kerchunk leave them out.
var hiddenAttributes = map[string]bool{
	"CLASS": true, "NAME": true, "DIMENSION_LIST": true, "REFERENCE_LIST": true, "DIMENSION_LABELS": true,
	"_Netcdf4Dimid": true, "_Netcdf4Coordinates": true, "_nc3_strict": true, "_NCProperties": true,
}

// Locate describes where dataset i's bytes are (format.Locator): a
// contiguous or compact dataset as one payload of the file; a chunked one
// as its grid, each allocated chunk a range of the file, deflate as Zarr's
// zlib compressor and shuffle as its shuffle filter, unallocated chunks
// missing (the dataset's fill value). Table columns, text, other filters,
// a chunk stored with a filter skipped and an edge chunk stored unfiltered
// cannot be described.
func (f *File) Locate(i int) (*format.Location, error) {
	if err := f.listedRecord(i); err != nil {
		return nil, err
	}
	f.mu.RLock()
	defer f.mu.RUnlock()
	if err := f.check(i); err != nil {
		return nil, err
	}
	rec, ref := &f.recs[i], &f.refs[i]
	d := ref.d
	if ref.mb != nil {
		return nil, format.Unlocatable("a column of the compound dataset %s: its values are strided through the table's rows", d.path)
	}
	loc := &format.Location{Shape: slices.Clone(rec.Shape), Order: layout.RowMajor,
		DType: format.NumPyDType(rec.Type, "", rec.BigEndian), Attributes: f.jsonAttributes(d)}
	if len(d.dims) == len(rec.Shape) {
		loc.DimensionNames = slices.Clone(d.dims)
	}
	switch l := d.lay; l.Class {
	case h5.Compact:
		loc.Offset, loc.Length = l.CompactAt, d.nbytes
		return loc, nil
	case h5.Contiguous:
		if d.data < 0 && d.count > 0 {
			return nil, format.Unlocatable("never written: its values are the fill value, stored nowhere")
		}
		loc.Offset, loc.Length = max(d.data, 0), d.nbytes
		return loc, nil
	case h5.Chunked:
		return f.locateChunks(d, rec, loc)
	}
	return nil, format.Unlocatable("%s storage", d.lay.Class)
}

// locateChunks fills in the chunk grid of the chunked dataset d.
func (f *File) locateChunks(d *dataset, rec *format.Record, loc *format.Location) (*format.Location, error) {
	g := &format.ChunkGrid{Separator: ".", Compressor: []byte("null"), Filters: []byte("null"), FillValue: []byte("null")}
	for _, c := range d.lay.ChunkDims {
		g.Chunks = append(g.Chunks, int64(c))
	}
	g.Chunks = append(g.Chunks, d.typ.arrayDims()...)
	var filters []map[string]any
	var pipe []h5.Filter
	if d.pipe != nil {
		pipe = d.pipe.Filters
	}
	for k, fl := range pipe {
		switch fl.ID {
		case h5.FilterShuffle:
			if k != 0 || len(filters) > 0 {
				return nil, format.Unlocatable("shuffle after another filter has no Zarr v2 form")
			}
			size := int(d.typ.size)
			if len(fl.Params) > 0 {
				size = int(fl.Params[0])
			}
			filters = append(filters, map[string]any{"id": "shuffle", "elementsize": size})
		case h5.FilterDeflate:
			if k != len(pipe)-1 {
				return nil, format.Unlocatable("a filter after deflate has no Zarr v2 form")
			}
			level := 4
			if len(fl.Params) > 0 {
				level = int(fl.Params[0])
			}
			g.Compressor = mustJSON(map[string]any{"id": "zlib", "level": level})
		default:
			return nil, format.Unlocatable("filter %s has no Zarr v2 codec here", fl.Name)
		}
	}
	if filters != nil {
		g.Filters = mustJSON(filters)
	}
	t, err := d.chunkTable(f.m.r)
	if err != nil {
		return nil, wrapErr(f.name, d.at, err, "dataset %s", d.path)
	}
	filtered := len(pipe) > 0
	err = t.Each(func(c h5.Chunk, partial bool) error {
		if err := h5.CheckStored(c, t.ChunkBytes(), len(pipe)); err != nil {
			return wrapErr(f.name, d.at, err, "dataset %s", d.path)
		}
		switch {
		case c.FilterMask != 0:
			return format.Unlocatable("chunk %v was stored with filters skipped (mask %#x), which a Zarr array cannot say of one chunk", c.Offset, c.FilterMask)
		case partial && filtered && d.lay.EdgeChunksUnfiltered:
			return format.Unlocatable("edge chunk %v is stored unfiltered, which a Zarr array cannot say of one chunk", c.Offset)
		}
		idx := make([]int64, len(g.Chunks))
		for k, o := range c.Offset {
			idx[k] = int64(o / d.lay.ChunkDims[k])
		}
		g.Stored = append(g.Stored, format.Chunk{Index: idx, Offset: c.Addr, Length: int64(c.Size)})
		return nil
	})
	if err != nil {
		return nil, err
	}
	slices.SortFunc(g.Stored, func(a, b format.Chunk) int { return slices.Compare(a.Index, b.Index) })
	grid := int64(1)
	for k, n := range loc.Shape {
		grid *= (n + g.Chunks[k] - 1) / max(g.Chunks[k], 1)
	}
	if int64(len(g.Stored)) < grid {
		// Unallocated chunks read as the fill value, which the grid must
		// then carry; zeros where the dataset has none.
		size := rec.Type.Size()
		fill := d.fill
		if len(fill) < size {
			fill = make([]byte, size)
		}
		g.FillValue = mustJSON(format.FillJSON(fill[:size], rec.Type, rec.ByteOrder()))
	}
	loc.Grid = g
	return loc, nil
}

// jsonAttributes are the dataset's attributes that JSON can hold,
// without those of the dimension-scale conventions.
func (f *File) jsonAttributes(d *dataset) map[string]any {
	var out map[string]any
	for _, a := range d.attrs {
		if hiddenAttributes[a.name] {
			continue
		}
		v := f.attrValue(a)
		if _, err := json.Marshal(v); err != nil || v == nil {
			continue
		}
		if out == nil {
			out = map[string]any{}
		}
		out[a.name] = v
	}
	return out
}

// mustJSON marshals values built here, which always marshal.
func mustJSON(v any) []byte {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return b
}
