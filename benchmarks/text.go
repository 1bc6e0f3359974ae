package benchmarks

import (
	"fmt"
	"strconv"
	"time"
)

// textValues returns the values of the Futhark text figures: about
// textSize bytes once printed.
func (s *suite) textValues() []float64 {
	xs := make([]float64, s.o.textSize/10) // "249.75f64, " is 8-11 bytes
	fillF64(xs, 0)
	return xs
}

// appendFutharkText appends xs as a Futhark f64 array literal,
// "[0.0f64, 0.25f64, …]", the way a program would print one by hand.
func appendFutharkText(b []byte, xs []float64) []byte {
	b = append(b, '[')
	for i, x := range xs {
		if i > 0 {
			b = append(b, ", "...)
		}
		b = strconv.AppendFloat(b, x, 'g', -1, 64)
		b = append(b, "f64"...)
	}
	return append(b, ']')
}

// parseFutharkText parses what appendFutharkText printed with nothing
// but strconv.ParseFloat and a byte loop: the least any parser does.
func parseFutharkText(b []byte, dst []float64) ([]float64, error) {
	dst = dst[:0]
	i := 0
	for i < len(b) {
		c := b[i]
		if c == '[' || c == ']' || c == ',' || c == ' ' {
			i++
			continue
		}
		j := i
		for j < len(b) && b[j] != ',' && b[j] != ']' {
			j++
		}
		tok := b[i:j]
		if len(tok) > 3 && string(tok[len(tok)-3:]) == "f64" {
			tok = tok[:len(tok)-3]
		}
		x, err := strconv.ParseFloat(string(tok), 64)
		if err != nil {
			return nil, fmt.Errorf("offset %d: %w", i, err)
		}
		dst = append(dst, x)
		i = j
	}
	return dst, nil
}

// strconvParse is the baseline of futhark_text_parse.
func (s *suite) strconvParse() (float64, int64, error) {
	xs := s.textValues()
	text := appendFutharkText(nil, xs)
	dst := make([]float64, 0, len(xs))
	d, err := s.best(func() (time.Duration, error) {
		var got []float64
		d, err := timed(func() (err error) { got, err = parseFutharkText(text, dst); return err })
		if err == nil && (len(got) != len(xs) || got[len(got)-1] != xs[len(xs)-1]) {
			err = fmt.Errorf("strconv parse: got %d values, want %d", len(got), len(xs))
		}
		return d, err
	})
	if err != nil {
		return 0, 0, err
	}
	return float64(len(text)) / d.Seconds() / 1e6, int64(len(text)), nil
}

// strconvFormat is the baseline of futhark_text_print.
func (s *suite) strconvFormat() (float64, int64, error) {
	xs := s.textValues()
	buf := make([]byte, 0, 16*len(xs))
	var n int
	d, err := s.best(func() (time.Duration, error) {
		return timed(func() error {
			n = len(appendFutharkText(buf[:0], xs))
			return nil
		})
	})
	if err != nil {
		return 0, 0, err
	}
	return float64(n) / d.Seconds() / 1e6, int64(n), nil
}
