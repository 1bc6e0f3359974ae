// Package dataset implements `mmapkit dataset`, a re-implementation of
// `futhark dataset`: it generates random Futhark values of given types or
// literal values, and converts standard input between the binary and text
// value formats, byte-identical to futhark-data. The command-line tool
// calls Main.
package dataset

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"os"
	"strings"

	"github.com/mmapkit/mmapkit/futhark"
	"github.com/mmapkit/mmapkit/layout"
)

type format int

const (
	fmtText format = iota
	fmtBinary
	fmtType
)

var numericTypes = []layout.Type{layout.I8, layout.I16, layout.I32, layout.I64, layout.U8, layout.U16, layout.U32,
	layout.U64, layout.F16, layout.F32, layout.F64}

func options() []optDesc {
	d := []optDesc{
		{short: 'b', long: "binary", help: "Generate binary data (position-sensitive)."},
		{long: "text", help: "Generate text data (the default; position-sensitive)."},
		{short: 't', long: "type", help: "Print the type of each value instead of the value (position-sensitive)."},
		{short: 'g', long: "generate", arg: reqArg, argName: "TYPE", help: "Generate a random value of this type, or the literal values given."},
		{short: 's', long: "seed", arg: reqArg, argName: "SEED", help: "Random seed (default 1)."},
		{long: "aligned", arg: optArg, argName: "64", help: "Pad binary values so payloads are aligned to the element size (or 64 bytes); mmapkit only."},
		{short: 'h', long: "help", help: "Print help and exit."},
		{short: 'V', long: "version", help: "Print version information and exit."},
	}
	for _, t := range numericTypes {
		d = append(d, optDesc{long: t.String() + "-bounds", arg: reqArg, argName: "MIN:MAX",
			help: "Inclusive range of random " + t.String() + " values for later -g."})
	}
	return d
}

const usageHeader = `Usage: mmapkit dataset [options...]

Generate random Futhark values, or convert values on standard input
between the binary and text formats (no -g).

Examples:
  mmapkit dataset -g [4][2]i32
  mmapkit dataset -b -g [10]f32 --i64-bounds=0:9 -g [100]i64 > in.data
  mmapkit dataset --binary < any_data > binary_data
  mmapkit dataset -t < any_data

Options:`

// bound is an inclusive range: integers as wrapped 64-bit patterns, floats
// as doubles.
type bound struct {
	ilo, ihi uint64
	flo, fhi float64
}

// generator is one -g: literal values or a type, with the format and
// bounds in force where it appeared.
type generator struct {
	lit    []futhark.Value
	typ    valueType
	isType bool
	format format
	bounds map[layout.Type]bound
}

type usageError struct{ msg string }

func (e usageError) Error() string { return e.msg }

// Main runs `mmapkit dataset` with args (without the command name) and
// returns the exit status: 0 success, 1 data or I/O errors, 2 usage
// errors.
func Main(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	descs := options()
	usage := func(msg string) int {
		fmt.Fprintf(stderr, "mmapkit: dataset: %s\nRun 'mmapkit dataset --help' for usage.\n", msg)
		return 2
	}
	opts, rest, err := getOpt(descs, args)
	if err != nil {
		return usage(err.Error())
	}
	for _, o := range opts {
		switch o.desc.long {
		case "help":
			fmt.Fprint(stdout, usageInfo(usageHeader, descs))
			return 0
		case "version":
			fmt.Fprintln(stdout, "mmapkit dataset: futhark dataset compatible (futhark-data 1.1.3.0 value format)")
			return 0
		}
	}
	if len(rest) > 0 {
		return usage("Junk argument: " + rest[0])
	}
	seed := uint64(1)
	cur := fmtText
	align := futhark.AlignNone
	bounds := map[layout.Type]bound{}
	var gens []generator
	for _, o := range opts {
		switch o.desc.long {
		case "binary":
			cur = fmtBinary
		case "text":
			cur = fmtText
		case "type":
			cur = fmtType
		case "seed":
			v, ok := readsInt(o.value)
			if !ok {
				return usage(fmt.Sprintf("'%s' is not an integer.", o.value))
			}
			seed = v
		case "aligned":
			align = futhark.AlignElement
			if o.has {
				a, ok := readsInt(o.value)
				if !ok || a < 1 || a > 4096 || a&(a-1) != 0 {
					return usage("--aligned takes a power of two up to 4096, e.g. --aligned=64")
				}
				align = int(a)
			}
		case "generate":
			g, err := newGenerator(o.value)
			if err != nil {
				return usage(err.Error())
			}
			g.format = cur
			g.bounds = make(map[layout.Type]bound, len(bounds))
			for k, v := range bounds {
				g.bounds[k] = v
			}
			gens = append(gens, g)
		default:
			t, _ := layout.ParseType(strings.TrimSuffix(o.desc.long, "-bounds"))
			b, ok := parseBounds(t, o.value)
			if !ok {
				return usage(fmt.Sprintf("Invalid bounds for %s: %s", t, o.value))
			}
			bounds[t] = b
		}
	}
	// The encoder hands over each value as it ends: buffered, a file of
	// many small values is not one write(2) a value.
	out := bufio.NewWriterSize(stdout, 1<<20)
	enc := futhark.NewWriter(out, 0, &futhark.Options{Align: align})
	code := 0
	if len(gens) > 0 {
		for k, g := range gens {
			if err := g.run(enc, seed+uint64(k)); err != nil {
				code = fail(stderr, err)
				break
			}
		}
	} else {
		code = convertStdin(stdin, enc, cur, stderr)
	}
	if err := out.Flush(); err != nil && code == 0 {
		code = fail(stderr, err)
	}
	return code
}

func fail(stderr io.Writer, err error) int {
	var fe *futhark.FormatError
	if errors.As(err, &fe) {
		fe.File = "<stdin>"
		fmt.Fprintf(stderr, "mmapkit: %s\n", strings.TrimPrefix(fe.Error(), "futhark: "))
		return 1
	}
	if errors.As(err, new(usageError)) {
		fmt.Fprintf(stderr, "mmapkit: dataset: %v\n", err)
		return 2
	}
	fmt.Fprintf(stderr, "mmapkit: dataset: %v\n", err)
	return 1
}

// newGenerator reads T first as literal values, then as a type.
func newGenerator(s string) (generator, error) {
	if f, err := futhark.NewReader(strings.NewReader(s), int64(len(s)), nil); err == nil {
		g := generator{}
		for i := range f.Entries() {
			v, err := f.Value(i)
			if err != nil {
				return g, err
			}
			g.lit = append(g.lit, v)
		}
		return g, nil
	}
	t, err := parseType(s)
	if err != nil {
		return generator{}, err
	}
	if _, err := layout.ByteSize(t.elem, t.dims); err != nil {
		return generator{}, fmt.Errorf("type %s: dimensions overflow", s)
	}
	if len(t.dims) > futhark.MaxRank {
		return generator{}, fmt.Errorf("type %s: rank above %d", s, futhark.MaxRank)
	}
	return generator{typ: t, isType: true}, nil
}

func parseBounds(t layout.Type, s string) (bound, bool) {
	lo, hi, ok := strings.Cut(s, ":")
	if !ok {
		return bound{}, false
	}
	if t.IsFloat() {
		a, ok1 := readsFloat(lo)
		b, ok2 := readsFloat(hi)
		if !ok1 || !ok2 {
			return bound{}, false
		}
		if t == layout.F32 || t == layout.F16 {
			a, b = float64(float32(a)), float64(float32(b))
			if math.IsInf(a, 0) || math.IsInf(b, 0) {
				return bound{}, false
			}
		}
		if a > b {
			a, b = b, a
		}
		return bound{flo: a, fhi: b}, true
	}
	a, ok1 := readsInt(lo)
	b, ok2 := readsInt(hi)
	if !ok1 || !ok2 {
		return bound{}, false
	}
	a, b = wrapInt(t, a), wrapInt(t, b)
	if less(t, b, a) {
		a, b = b, a
	}
	return bound{ilo: a, ihi: b}, true
}

// wrapInt reduces a 64-bit pattern to type t, sign-extended for signed
// types, as Haskell's fromInteger does.
func wrapInt(t layout.Type, v uint64) uint64 {
	bits := uint(t.Size() * 8)
	if bits == 64 {
		return v
	}
	v &= 1<<bits - 1
	if t.IsSigned() && v>>(bits-1) == 1 {
		v |= ^uint64(0) << bits
	}
	return v
}

func less(t layout.Type, a, b uint64) bool {
	if t.IsSigned() {
		return int64(a) < int64(b)
	}
	return a < b
}

func defaultBound(t layout.Type) bound {
	switch {
	case t.IsFloat():
		return bound{flo: 0, fhi: 1}
	case t.IsSigned():
		bits := uint(t.Size() * 8)
		return bound{ilo: ^uint64(0) << (bits - 1), ihi: 1<<(bits-1) - 1}
	}
	bits := uint(t.Size() * 8)
	if bits == 64 {
		return bound{ilo: 0, ihi: math.MaxUint64}
	}
	return bound{ilo: 0, ihi: 1<<bits - 1}
}

func (g generator) run(enc *futhark.Encoder, seed uint64) error {
	if !g.isType {
		for _, v := range g.lit {
			var err error
			switch g.format {
			case fmtBinary:
				err = enc.EncodeBinary(v)
			case fmtText:
				err = enc.EncodeText(v)
			default:
				err = enc.EncodeType(v.Type, v.Shape)
			}
			if err != nil {
				return err
			}
		}
		return nil
	}
	t := g.typ
	switch g.format {
	case fmtType:
		return enc.EncodeType(t.elem, t.dims)
	case fmtBinary:
		if err := enc.BeginBinary(t.elem, t.dims); err != nil {
			return err
		}
	default:
		if err := enc.BeginText(t.elem, t.dims); err != nil {
			return err
		}
	}
	n, _ := layout.Count(t.dims)
	b, ok := g.bounds[t.elem]
	if !ok {
		b = defaultBound(t.elem)
	}
	r := rand.New(rand.NewPCG(seed, 0x9e3779b97f4a7c15))
	size := t.elem.Size()
	chunk := make([]byte, 0, 64<<10)
	for n > 0 {
		k := min(n, int64(cap(chunk)/size))
		chunk = fill(chunk[:0], r, t.elem, b, int(k))
		if err := enc.WriteElems(chunk); err != nil {
			return err
		}
		n -= k
	}
	return nil
}

// fill appends k random elements of type t within b, little-endian.
func fill(dst []byte, r *rand.Rand, t layout.Type, b bound, k int) []byte {
	for i := 0; i < k; i++ {
		var bits uint64
		switch {
		case t == layout.Bool:
			bits = r.Uint64() & 1
		case t.IsFloat():
			x := b.flo + (b.fhi-b.flo)*r.Float64()
			x = math.Min(math.Max(x, b.flo), b.fhi)
			switch t {
			case layout.F64:
				bits = math.Float64bits(x)
			case layout.F32:
				f := float32(x)
				if float64(f) < b.flo || float64(f) > b.fhi {
					f = float32(b.flo)
				}
				bits = uint64(math.Float32bits(f))
			default:
				bits = uint64(f16Within(layout.Float16From(float32(x)), b))
			}
		default:
			span := b.ihi - b.ilo
			if span == math.MaxUint64 {
				bits = r.Uint64()
			} else {
				bits = b.ilo + r.Uint64N(span+1)
			}
		}
		for j := 0; j < t.Size(); j++ {
			dst = append(dst, byte(bits>>(8*j)))
		}
	}
	return dst
}

// convertStdin reads all of standard input, validates every value, and
// only then writes them all, so malformed input leaves stdout empty.
func convertStdin(stdin io.Reader, enc *futhark.Encoder, f format, stderr io.Writer) int {
	file, err := mapStdin(stdin)
	if file == nil && err == nil {
		var data []byte
		data, err = io.ReadAll(stdin)
		if err != nil {
			fmt.Fprintf(stderr, "mmapkit: <stdin>: %v\n", err)
			return 1
		}
		file, err = futhark.NewReader(bytes.NewReader(data), int64(len(data)), nil)
	}
	if err != nil {
		return fail(stderr, err)
	}
	defer file.Close()
	for i, e := range file.Entries() {
		if f == fmtType {
			err = enc.EncodeType(e.Type, e.Shape)
		} else {
			err = file.Encode(enc, i, f == fmtBinary)
		}
		if err != nil {
			return fail(stderr, err)
		}
	}
	return 0
}

// f16Within moves a rounded f16 one step at a time back into [flo, fhi]
// when rounding took it out (the bounds need not be f16 values). If no
// f16 lies in the range the rounded value stands.
func f16Within(h layout.Float16, b bound) layout.Float16 {
	for step := 0; step < 2; step++ {
		v := h.Float64()
		switch {
		case v < b.flo:
			h = f16Step(h, true)
		case v > b.fhi:
			h = f16Step(h, false)
		default:
			return h
		}
	}
	return h
}

// f16Step returns the next f16 above (up) or below h.
func f16Step(h layout.Float16, up bool) layout.Float16 {
	neg := h&0x8000 != 0
	switch {
	case h == 0x8000 || h == 0:
		if up {
			return 1
		}
		return 0x8001
	case up != neg:
		return h + 1
	}
	return h - 1
}

// mapStdin maps standard input when it is a regular file read from its
// start, so that large inputs are not read into memory. It returns nil,
// nil when stdin cannot be mapped (a pipe, a terminal).
func mapStdin(stdin io.Reader) (*futhark.File, error) {
	f, ok := stdin.(*os.File)
	if !ok {
		return nil, nil
	}
	fi, err := f.Stat()
	if err != nil || !fi.Mode().IsRegular() || fi.Size() == 0 {
		return nil, nil
	}
	if pos, err := f.Seek(0, io.SeekCurrent); err != nil || pos != 0 {
		return nil, nil
	}
	file, err := futhark.Open(fmt.Sprintf("/proc/self/fd/%d", f.Fd()), nil)
	if err != nil {
		var fe *futhark.FormatError
		if errors.As(err, &fe) {
			return nil, err
		}
		return nil, nil // no /proc, or not mappable: read it instead
	}
	return file, nil
}
