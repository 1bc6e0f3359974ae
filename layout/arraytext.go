package layout

import "strconv"

// ArrayText prints an array in Futhark's canonical text form as its
// elements arrive, in row-major order and the host's byte order: "["
// elements "]", ", " between the elements of a row, and where rows end
// "]" for every closed dimension, ",\n", then "[" for every opened one;
// each element as AppendText prints it. An array of no elements prints as
// empty([d0][d1]…t). It is the one printer of whole arrays: Futhark's
// text encoder and the mmapkit command print through it.
//
// Feed the elements with Append, in pieces of any number of whole
// elements, then close the array with End.
type ArrayText struct {
	t       Type
	shape   []int64
	n, left int64   // elements in all, and still to come
	idx     []int64 // index of the current row in the outer dimensions
	rowLeft int64   // elements of the current row still to come
	started bool
	// wrap, when positive, breaks a row's line after every wrap elements.
	wrap int64
}

// Wrap makes rows longer than every elements break their line after
// every such run of elements (",\n" in place of ", "), which Futhark's
// syntax allows anywhere between elements: so that a million-element row
// is not one line, which line-oriented tools (head, less, grep) cannot
// cut. 0, the default, keeps each row on one line, as futhark-data prints.
func (a *ArrayText) Wrap(every int64) { a.wrap = every }

// NewArrayText starts printing an array of type t and shape. The shape's
// element count must be representable (see Count).
func NewArrayText(t Type, shape []int64) (*ArrayText, error) {
	a := &ArrayText{}
	if err := a.Reset(t, shape); err != nil {
		return nil, err
	}
	return a, nil
}

// Reset starts printing another array with a, reusing its memory.
func (a *ArrayText) Reset(t Type, shape []int64) error {
	n, err := Count(shape)
	if err != nil {
		return err
	}
	*a = ArrayText{t: t, shape: append(a.shape[:0], shape...), n: n, left: n, idx: a.idx[:0], wrap: a.wrap}
	return nil
}

// Len returns the number of elements of the array.
func (a *ArrayText) Len() int64 { return a.n }

// Left returns the number of elements still to be appended.
func (a *ArrayText) Left() int64 { return a.left }

// Append appends to dst the text of the whole elements in host (in the
// host's byte order) with the separators and brackets before each, and
// returns the extended slice. Elements past the array's last are
// ignored, and so is a trailing partial element.
func (a *ArrayText) Append(dst, host []byte) []byte {
	size := a.t.Size()
	for ; len(host) >= size && a.left > 0; host = host[size:] {
		dst = AppendText(a.Next(dst), a.t, host[:size])
	}
	return dst
}

// Next appends to dst what comes before the next element — the opening
// brackets, ", ", or the brackets and ",\n" where rows end — and counts the
// element as appended: the caller appends the element's own text after
// it. It is how arrays of elements that AppendText does not print (text)
// take the same form. Past the last element it appends nothing.
func (a *ArrayText) Next(dst []byte) []byte {
	if a.left <= 0 {
		return dst
	}
	a.left--
	rank := len(a.shape)
	switch {
	case !a.started:
		a.started = true
		for range rank {
			dst = append(dst, '[')
		}
		if rank > 0 {
			a.idx = append(a.idx[:0], make([]int64, rank-1)...)
			a.rowLeft = a.shape[rank-1]
		}
	case a.rowLeft > 0:
		if row := a.shape[rank-1]; a.wrap > 0 && row > a.wrap && (row-a.rowLeft)%a.wrap == 0 {
			dst = append(dst, ',', '\n')
		} else {
			dst = append(dst, ',', ' ')
		}
	default:
		// A row ended: carry into the outer dimensions.
		closed := 1
		for k := rank - 2; k >= 0; k-- {
			a.idx[k]++
			if a.idx[k] < a.shape[k] {
				break
			}
			a.idx[k] = 0
			closed++
		}
		for range closed {
			dst = append(dst, ']')
		}
		dst = append(dst, ',', '\n')
		for range closed {
			dst = append(dst, '[')
		}
		a.rowLeft = a.shape[rank-1]
	}
	if rank > 0 {
		a.rowLeft--
	}
	return dst
}

// End appends what closes the array: its closing brackets, or the whole
// empty([d0][d1]…t) form for an array of no elements. It does not append a
// newline. Ending an array before all its elements were appended leaves
// the text unbalanced.
func (a *ArrayText) End(dst []byte) []byte {
	if a.n == 0 {
		dst = append(dst, "empty("...)
		for _, d := range a.shape {
			dst = append(strconv.AppendInt(append(dst, '['), d, 10), ']')
		}
		return append(append(dst, a.t.String()...), ')')
	}
	if a.started {
		for range a.shape {
			dst = append(dst, ']')
		}
	}
	return dst
}
