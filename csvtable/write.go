package csvtable

import (
	"bufio"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/mmapkit/mmapkit/format"
	"github.com/mmapkit/mmapkit/layout"
)

// Encode writes the table of src as CSV with a header line: the columns of
// a table (a DAPHNE frame, a SciDB file, a structured NumPy array), or
// equal-length 1-D arrays; see format.ScanTable. Null cells are empty
// fields.
func Encode(w io.Writer, src format.Source) error {
	if hasTextArrays(src) {
		return encodeArrays(w, src)
	}
	// The columns one at a time: a table may have millions.
	err := format.EachTableColumn(src, func(r *format.Record) error {
		if r.Type.IsComplex() {
			return format.Unrepresentable(r, "CSV holds no complex numbers")
		}
		return nil
	})
	if err != nil {
		return err
	}
	bw := bufio.NewWriterSize(w, 256<<10)
	var line []byte
	first := true
	err = format.EachTableColumn(src, func(r *format.Record) error {
		if !first {
			line = append(line, ',')
		}
		first = false
		line = AppendField(line, r.Name)
		if len(line) >= 64<<10 {
			_, err := bw.Write(line)
			line = line[:0]
			return err
		}
		return nil
	})
	if err != nil {
		return err
	}
	line = append(line, '\n')
	if _, err := bw.Write(line); err != nil {
		return err
	}
	err = format.ScanTable(src, 1<<14, func(first int64, batch []format.Column) error {
		var werr error
		line, werr = appendRows(bw, line, batch)
		return werr
	})
	if err != nil {
		return err
	}
	return bw.Flush()
}

// appendRows writes the rows of a batch of columns to bw, line being the
// buffer to reuse, which it returns.
func appendRows(bw *bufio.Writer, line []byte, batch []format.Column) ([]byte, error) {
	n := 0
	if len(batch) > 0 {
		n = batch[0].Len()
	}
	for k := 0; k < n; k++ {
		line = line[:0]
		for j := range batch {
			if j > 0 {
				line = append(line, ',')
			}
			c := &batch[j]
			if c.Reason != nil && c.Reason[k] >= 0 {
				continue
			}
			line = appendCell(line, c.Values, k)
		}
		line = append(line, '\n')
		if _, err := bw.Write(line); err != nil {
			return line, err
		}
	}
	return line, nil
}

// AppendField appends s as one CSV field, quoted when RFC 4180 needs it
// or when s is empty (an unquoted empty field is a null).
func AppendField(b []byte, s string) []byte {
	if s != "" && !strings.ContainsAny(s, ",\"\r\n") {
		return append(b, s...)
	}
	b = append(b, '"')
	for i := 0; i < len(s); i++ {
		if s[i] == '"' {
			b = append(b, '"')
		}
		b = append(b, s[i])
	}
	return append(b, '"')
}

// appendCell appends cell k of a column's values.
func appendCell(b []byte, values any, k int) []byte {
	switch v := values.(type) {
	case []string:
		return AppendField(b, v[k])
	case []int8:
		return strconv.AppendInt(b, int64(v[k]), 10)
	case []int16:
		return strconv.AppendInt(b, int64(v[k]), 10)
	case []int32:
		return strconv.AppendInt(b, int64(v[k]), 10)
	case []int64:
		return strconv.AppendInt(b, v[k], 10)
	case []uint8:
		return strconv.AppendUint(b, uint64(v[k]), 10)
	case []uint16:
		return strconv.AppendUint(b, uint64(v[k]), 10)
	case []uint32:
		return strconv.AppendUint(b, uint64(v[k]), 10)
	case []uint64:
		return strconv.AppendUint(b, v[k], 10)
	case []float32:
		return strconv.AppendFloat(b, float64(v[k]), 'g', -1, 32)
	case []float64:
		return strconv.AppendFloat(b, v[k], 'g', -1, 64)
	case []layout.Float16:
		return strconv.AppendFloat(b, float64(v[k].Float32()), 'g', -1, 32)
	case []bool:
		return strconv.AppendBool(b, v[k])
	case []layout.Int128:
		return append(b, v[k].String()...)
	case []layout.Uint128:
		return append(b, v[k].String()...)
	case []layout.Char:
		if r, err := v[k].Rune(); err == nil {
			return strconv.AppendInt(b, int64(r), 10)
		}
		return strconv.AppendUint(b, uint64(v[k]), 10)
	}
	return append(b, fmt.Sprintf("%v", values)...)
}
