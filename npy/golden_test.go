package npy

import (
	"bytes"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mmapkit/mmapkit/format"
	"github.com/mmapkit/mmapkit/layout"
)

// goldenArray is what testdata/make_golden.py records NumPy reading from
// one array.
type goldenArray struct {
	Descr        string         `json:"descr"`
	Shape        []int64        `json:"shape"`
	FortranOrder bool           `json:"fortran_order"`
	Version      string         `json:"version"`
	Offset       int64          `json:"offset"`
	Values       []any          `json:"values"`
	Fields       map[string]any `json:"fields"`
}

type goldenFile struct {
	Arrays map[string]goldenArray `json:"arrays"`
}

func sortedNames[T any](m map[string]T) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// jsonValue turns one golden value into what decoded values compare to.
func jsonValue(v any) any {
	switch v := v.(type) {
	case float64:
		return v // an integer or a bool never arrives as float: see decodeValues
	case string:
		return v
	case []any:
		return [2]float64{parsePyFloat(v[0].(string)), parsePyFloat(v[1].(string))}
	}
	return v
}

// pyFloat parses Python's repr of a float.
func parsePyFloat(s string) float64 {
	x, err := strconv.ParseFloat(s, 64)
	if err != nil {
		panic(err)
	}
	return x
}

// decodeValues renders host-order elements of t as the golden file
// writes them: ints as int64/uint64 (json.Number-free: compared as
// strings), floats as float64, complex as [2]float64, bools as bool.
func decodeValues(t layout.Type, b []byte) []any {
	var out []any
	for i := 0; i < len(b); i += t.Size() {
		e := b[i : i+t.Size()]
		o := binary.NativeEndian
		switch {
		case t == layout.Bool:
			out = append(out, e[0] == 1)
		case t.IsSigned():
			var x int64
			switch t.Size() {
			case 1:
				x = int64(int8(e[0]))
			case 2:
				x = int64(int16(o.Uint16(e)))
			case 4:
				x = int64(int32(o.Uint32(e)))
			default:
				x = int64(o.Uint64(e))
			}
			out = append(out, strconv.FormatInt(x, 10))
		case t.IsUnsigned():
			var x uint64
			switch t.Size() {
			case 1:
				x = uint64(e[0])
			case 2:
				x = uint64(o.Uint16(e))
			case 4:
				x = uint64(o.Uint32(e))
			default:
				x = o.Uint64(e)
			}
			out = append(out, strconv.FormatUint(x, 10))
		case t == layout.F16:
			out = append(out, layout.Float16(o.Uint16(e)).Float64())
		case t == layout.F32:
			out = append(out, float64(math.Float32frombits(o.Uint32(e))))
		case t == layout.F64:
			out = append(out, math.Float64frombits(o.Uint64(e)))
		case t == layout.C64:
			out = append(out, [2]float64{float64(math.Float32frombits(o.Uint32(e))), float64(math.Float32frombits(o.Uint32(e[4:])))})
		case t == layout.C128:
			out = append(out, [2]float64{math.Float64frombits(o.Uint64(e)), math.Float64frombits(o.Uint64(e[8:]))})
		}
	}
	return out
}

// goldenValues converts golden values for comparison with decodeValues
// (integers become decimal strings, text of |S and |V stays hex).
func goldenValues(raw []any, t layout.Type) []any {
	out := make([]any, len(raw))
	for i, v := range raw {
		switch x := v.(type) {
		case json.Number:
			out[i] = x.String()
		case string:
			if t.IsFloat() {
				out[i] = parsePyFloat(x)
			} else {
				out[i] = x
			}
		default:
			out[i] = jsonValue(v)
		}
	}
	return out
}

func loadGoldenNumbers(t *testing.T) map[string]goldenFile {
	t.Helper()
	b, err := os.ReadFile("testdata/golden.json")
	require.NoError(t, err)
	d := json.NewDecoder(bytes.NewReader(b))
	d.UseNumber()
	var g map[string]goldenFile
	require.NoError(t, d.Decode(&g))
	return g
}

// sameValues compares decoded values with golden ones, NaN equal to NaN.
func sameValues(t *testing.T, want, got []any, msg string) {
	t.Helper()
	require.Len(t, got, len(want), msg)
	for i := range want {
		w, g := want[i], got[i]
		if wf, ok := w.(float64); ok {
			gf, ok := g.(float64)
			require.True(t, ok, "%s [%d]: %v is not a float", msg, i, g)
			if !(math.IsNaN(wf) && math.IsNaN(gf)) {
				require.Equal(t, wf, gf, "%s [%d]", msg, i)
			}
			continue
		}
		require.Equal(t, w, g, "%s [%d]", msg, i)
	}
}

// textValues renders ReadStrings' values as the golden file writes them.
func textValues(dt DType, vals []string) []any {
	out := make([]any, len(vals))
	for i, v := range vals {
		if dt.Kind == 'U' {
			out[i] = v
		} else {
			out[i] = hex.EncodeToString([]byte(v))
		}
	}
	return out
}

// checkRecordValues compares the values of record name of src (a format
// source over f) with the golden ones.
func checkRecordValues(t *testing.T, f *File, src format.Source, name string, raw []any, msg string) {
	t.Helper()
	i, err := format.Find(src, name)
	if err != nil && strings.HasSuffix(name, MaskSuffix) {
		// A mask field folded into its column: read it through npy.
		v, err := Read[bool](f, name)
		require.NoError(t, err, msg)
		got := make([]any, len(v))
		for k, b := range v {
			got[k] = b
		}
		require.Equal(t, raw, got, msg)
		return
	}
	require.NoError(t, err, msg)
	rec := src.Records()[i]
	if !rec.Type.Valid() {
		tg, err := f.resolve(name)
		require.NoError(t, err, msg)
		vals, err := f.ReadStrings(name)
		require.NoError(t, err, msg)
		require.Equal(t, raw, textValues(tg.dtype(), vals), msg)
		return
	}
	b, err := format.ReadAll(src, i, layout.RowMajor, layout.HostOrder())
	require.NoError(t, err, msg)
	sameValues(t, goldenValues(raw, rec.Type), decodeValues(rec.Type, b), msg)
}

// TestGoldenFiles reads every file that NumPy wrote (or read, for the
// hand-made headers) and checks what this package reads against what
// NumPy read: dtype, shape, order, version, data offset and every value.
func TestGoldenFiles(t *testing.T) {
	golden := loadGoldenNumbers(t)
	for _, name := range sortedNames(golden) {
		g := golden[name]
		t.Run(name, func(t *testing.T) {
			path := filepath.Join("testdata", name)
			f, err := Open(path, nil)
			require.NoError(t, err)
			defer f.Close()
			arrays := f.Arrays()
			require.Len(t, arrays, len(g.Arrays))
			src := f
			for _, key := range sortedNames(g.Arrays) {
				ga := g.Arrays[key]
				a, ok := f.Lookup(key)
				require.True(t, ok, "array %q", key)
				msg := fmt.Sprintf("%s[%s]", name, key)
				assert.Equal(t, ga.Descr, a.DType.String(), msg)
				assert.Equal(t, ga.Shape, a.Shape, msg)
				assert.Equal(t, ga.FortranOrder, a.FortranOrder && !layout.Trivial(a.Shape), msg)
				assert.Equal(t, ga.Version, a.Version, msg)
				assert.Equal(t, ga.Offset, a.Offset, msg)
				if ga.Fields == nil {
					checkRecordValues(t, f, src, key, ga.Values, msg)
					continue
				}
				for _, fname := range sortedNames(ga.Fields) {
					rn := fname
					if f.IsZip() {
						rn = key + "/" + fname
					}
					checkRecordValues(t, f, src, rn, ga.Fields[fname].([]any), msg+"."+fname)
				}
			}
		})
	}
}
