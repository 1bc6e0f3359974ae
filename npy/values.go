package npy

import (
	"errors"
	"strconv"
	"strings"

	"github.com/mmapkit/mmapkit/layout"
)

// The literals SetText takes: Futhark's for numbers (format.ParseLiteral),
// and also Python's complex literals for complex numbers.

// parseComplex parses "1.5", "2j", "1+2j", "(1-2j)" (Python's spelling)
// or Go's with i.
func parseComplex(v string, part layout.Type) (complex128, error) {
	s := strings.TrimSuffix(strings.TrimPrefix(v, "("), ")")
	if strings.HasSuffix(s, "j") {
		s = strings.TrimSuffix(s, "j") + "i"
	}
	bits := 128
	if part == layout.F32 {
		bits = 64
	}
	c, err := strconv.ParseComplex(s, bits)
	var ne *strconv.NumError
	if errors.As(err, &ne) && errors.Is(ne.Err, strconv.ErrRange) {
		return c, nil
	}
	return c, err
}
