package layout

import (
	"fmt"
	"os"
)

// Policy says where a payload may start.
type Policy struct {
	// Align is the alignment in bytes: 0 means the record's own element
	// alignment (AlignedBinaryFormat.jl's rule); a power of two such as 64
	// gives cache-line alignment; see [PagePolicy].
	Align int64
}

// ElementPolicy aligns each payload to its element alignment, as
// AlignedBinaryFormat.jl does.
var ElementPolicy = Policy{}

// FixedPolicy aligns every payload to n bytes (at least the element
// alignment of the record).
func FixedPolicy(n int64) Policy { return Policy{Align: n} }

// PagePolicy aligns every payload to the OS page size.
func PagePolicy() Policy { return Policy{Align: int64(os.Getpagesize())} }

// Slot is the room one record needs, to be placed by Plan: a header of
// Header bytes followed by padding and a payload of Payload bytes whose
// elements need ElemAlign (what the planner knows of a record).
type Slot struct {
	Header    int64
	ElemAlign int64
	Payload   int64
}

// Placement is where a record lies: its header at [Start, HeaderEnd),
// Padding zero bytes, the payload at [Offset, End).
type Placement struct {
	Start, HeaderEnd int64
	Padding          int64
	Offset, End      int64
}

// Place computes the placement of one record starting at start.
func (p Policy) Place(start int64, r Slot) (Placement, error) {
	if r.Header < 0 || r.Payload < 0 || start < 0 {
		return Placement{}, fmt.Errorf("layout: place: %w (start %d, header %d, payload %d)", ErrNegative, start, r.Header, r.Payload)
	}
	a := r.ElemAlign
	if a < 1 {
		a = 1
	}
	if p.Align > a {
		a = p.Align
	}
	hEnd, ok := Add(start, r.Header)
	if !ok {
		return Placement{}, fmt.Errorf("layout: place: header end %w", ErrOverflow)
	}
	off, err := AlignUp(hEnd, a)
	if err != nil {
		return Placement{}, err
	}
	end, ok := Add(off, r.Payload)
	if !ok {
		return Placement{}, fmt.Errorf("layout: place: payload end %w", ErrOverflow)
	}
	return Placement{Start: start, HeaderEnd: hEnd, Padding: off - hEnd, Offset: off, End: end}, nil
}

// Plan places records one after another from start, each at the end of the
// previous one.
func Plan(start int64, p Policy, recs []Slot) ([]Placement, error) {
	out := make([]Placement, 0, len(recs))
	at := start
	for i, r := range recs {
		pl, err := p.Place(at, r)
		if err != nil {
			return nil, fmt.Errorf("record %d: %w", i, err)
		}
		out = append(out, pl)
		at = pl.End
	}
	return out, nil
}
