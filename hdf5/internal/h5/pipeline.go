package h5

import (
	"fmt"
	"strings"
)

// Filter identifiers mmapkit knows by name.
const (
	FilterDeflate     = 1
	FilterShuffle     = 2
	FilterFletcher32  = 3
	FilterSzip        = 4
	FilterNbit        = 5
	FilterScaleOffset = 6
	FilterLZF         = 32000
	FilterBlosc       = 32001
	FilterLZ4         = 32004
	FilterBitshuffle  = 32008
	FilterZstd        = 32015
)

var filterNames = map[uint16]string{
	FilterDeflate:     "deflate",
	FilterShuffle:     "shuffle",
	FilterFletcher32:  "fletcher32",
	FilterSzip:        "szip",
	FilterNbit:        "nbit",
	FilterScaleOffset: "scaleoffset",
	FilterLZF:         "lzf",
	FilterBlosc:       "blosc",
	FilterLZ4:         "lz4",
	FilterBitshuffle:  "bitshuffle",
	FilterZstd:        "zstd",
}

// maxFilters is the most filters a pipeline message may hold.
const maxFilters = 32

// Filter is one stage of a filter pipeline.
type Filter struct {
	ID     uint16
	Name   string // the known name of ID, else the name stored in the message
	Flags  uint16 // bit 0: optional
	Params []uint32
}

// Pipeline is a filter pipeline message (type 11, versions 1 and 2); filters are in the
// order they were applied when writing.
type Pipeline struct {
	Filters []Filter
	// At is the absolute offset of the message body, for errors.
	At int64
}

// ParsePipeline parses a filter pipeline message body found at absolute offset at.
func ParsePipeline(body []byte, at int64) (*Pipeline, error) {
	d := &decoder{b: body, at: at}
	version := d.u8("pipeline version")
	n := int(d.u8("number of filters"))
	if d.err != nil {
		return nil, d.err
	}
	switch version {
	case 1:
		d.skip(6, "reserved")
	case 2:
	default:
		return nil, errorf(at, "filter pipeline version %d is not 1 or 2", version)
	}
	if n > maxFilters {
		return nil, errorf(at+1, "filter pipeline has %d filters, more than %d", n, maxFilters)
	}
	p := &Pipeline{Filters: make([]Filter, 0, n), At: at}
	for i := 0; i < n; i++ {
		f := Filter{ID: d.u16("filter id")}
		nameLen := 0
		if version == 1 || f.ID >= 256 {
			nameLen = int(d.u16("filter name length"))
		}
		f.Flags = d.u16("filter flags")
		nvals := int(d.u16("number of filter parameters"))
		name := d.take(nameLen, "filter name")
		vals := d.take(4*nvals, "filter parameters")
		if version == 1 && nvals%2 == 1 {
			d.skip(4, "filter parameter padding")
		}
		if d.err != nil {
			return nil, d.err
		}
		if nvals > 0 {
			f.Params = make([]uint32, nvals)
			for j := range f.Params {
				f.Params[j] = uint32(vals[4*j]) | uint32(vals[4*j+1])<<8 | uint32(vals[4*j+2])<<16 | uint32(vals[4*j+3])<<24
			}
		}
		if known, ok := filterNames[f.ID]; ok {
			f.Name = known
		} else {
			f.Name = strings.TrimRight(string(name), "\x00")
			if i := strings.IndexByte(f.Name, 0); i >= 0 {
				f.Name = f.Name[:i]
			}
		}
		p.Filters = append(p.Filters, f)
	}
	return p, nil
}

// decodable reports whether Decode can undo filter id.
func decodable(id uint16) bool {
	switch id {
	case FilterDeflate, FilterShuffle, FilterFletcher32, FilterLZF:
		return true
	}
	return false
}

// describe names a filter for messages: "6 (scaleoffset)".
func (f Filter) describe() string {
	if f.Name == "" {
		return fmt.Sprint(f.ID)
	}
	return fmt.Sprintf("%d (%s)", f.ID, f.Name)
}

// Supported returns nil or an error wrapping errors.ErrUnsupported naming the first
// filter it cannot decode ("filter 6 (scaleoffset) is not supported").
func (p *Pipeline) Supported() error {
	if p == nil {
		return nil
	}
	for _, f := range p.Filters {
		if !decodable(f.ID) {
			return unsupported(p.At, "filter %s is not supported", f.describe())
		}
	}
	return nil
}
