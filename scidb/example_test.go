package scidb_test

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"log"
	"os"
	"path/filepath"
	"strings"

	"github.com/mmapkit/mmapkit/format"
	"github.com/mmapkit/mmapkit/mmapfile"
	"github.com/mmapkit/mmapkit/scidb"
)

func ExampleParseFormat() {
	f, err := scidb.ParseFormat("( int8 , int16 NULL, string(10), skip(8) null )")
	if err != nil {
		log.Fatal(err)
	}
	stride, fixed := f.Stride()
	fmt.Println(f, len(f.Attrs), stride, fixed)

	_, err = scidb.ParseFormat("(int64,)")
	fmt.Println(err)
	// Output:
	// (int8, int16 null, string(10), skip(8) null) 3 23 true
	// scidb: format "(int64,)": position 8, entry 2: empty entry
}

func ExampleDecode() {
	// The flatArray of SciDB's "Binary Files" documentation, two cells.
	data := []byte{
		0x01, 0x00, 0x00, 0x00, 0xff, 0x06, 0x00, 0x00, 0x00, 'H', 'e', 'l', 'l', 'o', 0x00, 0x02, 0x00, 0x00, 0x00, 'W', 0x00,
		0xfe, 0xff, 0x02, 0x01, 0x07, 0x00, 0x00, 0x00, 0x00, 0x01, 0x00, 0x00, 0x00, 0x00,
	}
	f, _ := scidb.ParseFormat("(int8, int16 null, string null, string)")
	t, err := scidb.Decode(data, &scidb.Options{Format: f, Lenient: true})
	if err != nil {
		log.Fatal(err)
	}
	for _, c := range t.Cols {
		fmt.Println(c.Name, c.Column, c.Data, c.Reason)
	}
	// Output:
	// a0 int8 [1 -2] []
	// a1 int16 null [0 258] [0 -1]
	// a2 string null [Hello ] [-1 7]
	// a3 string [W ] []
}

func ExampleNewEncoder() {
	f, _ := scidb.ParseFormat("(int64, double null, string)")
	var buf bytes.Buffer
	w := scidb.NewEncoder(&buf, f)
	w.Write(scidb.Row{scidb.Int64Value(1), scidb.Float64Value(0.5), scidb.StringValue("a")})
	w.Write(scidb.Row{scidb.Int64Value(2), scidb.NullValue(0), scidb.StringValue("")})
	if err := w.Flush(); err != nil {
		log.Fatal(err)
	}
	fmt.Printf("% x\n", buf.Bytes())

	r := scidb.NewDecoder(&buf, &scidb.Options{Format: f})
	row := make(scidb.Row, 3)
	for r.Read(row) != io.EOF {
		fmt.Printf("%q %q %q\n", row[0].Text(f.Attr(0)), row[1].Text(f.Attr(1)), row[2].Text(f.Attr(2)))
	}
	// Output:
	// 01 00 00 00 00 00 00 00 ff 00 00 00 00 00 00 e0 3f 02 00 00 00 61 00 02 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 01 00 00 00 00
	// "1" "0.5" "a"
	// "2" "" ""
}

func ExampleOpen() {
	dir, _ := os.MkdirTemp("", "scidb")
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "points.scidb")

	f, _ := scidb.ParseFormat("(int64, double null)")
	var buf bytes.Buffer
	w := scidb.NewEncoder(&buf, f)
	for i := int64(0); i < 4; i++ {
		v := scidb.Float64Value(float64(i) / 4)
		if i == 2 {
			v = scidb.NullValue(7)
		}
		w.Write(scidb.Row{scidb.Int64Value(i * 10), v})
	}
	w.Flush()
	os.WriteFile(path, buf.Bytes(), 0o644)

	m, err := scidb.Open(path, &scidb.Options{Format: f})
	if err != nil {
		log.Fatal(err)
	}
	defer m.Close()
	ids, _ := scidb.ColumnOf[int64](m, 0)
	xs, _ := scidb.ColumnOf[float64](m, 1)
	all := make([]float64, m.Len())
	if _, err := xs.Copy(all); err != nil {
		log.Fatal(err)
	}
	id, _, _ := ids.At(3)
	_, null, reason := xs.At(2)
	fmt.Println(m.Len(), id, all, null, reason)
	// Output:
	// 4 30 [0 0.25 0 0.75] true 7
}

// Change one value in place, through a read-write mapping, and copy an
// attribute's values out: attributes are named by index, the index of a
// value is [cell].
func ExampleSet() {
	dir, _ := os.MkdirTemp("", "scidb")
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "points.scidb")
	f, _ := scidb.ParseFormat("(int64, double)")
	t, _ := scidb.NewTable(f, 3)
	t.Cols[0].Data = []int64{10, 20, 30}
	t.Cols[1].Data = []float64{0.5, 1.5, 2.5}
	if err := scidb.EncodeFile(path, t); err != nil {
		log.Fatal(err)
	}

	m, err := scidb.OpenFile(path, mmapfile.ReadWrite, &scidb.Options{Format: f})
	if err != nil {
		log.Fatal(err)
	}
	if err := scidb.Set(m, 1, []int64{2}, -1.0); err != nil { // attribute 1 of cell 2
		log.Fatal(err)
	}
	xs, _ := scidb.Read[float64](m, 1)
	fmt.Println(xs)
	_, err = scidb.View[float64](m, 1) // strided: not one run of values
	fmt.Println(errors.Is(err, errors.ErrUnsupported), strings.Contains(err.Error(), "copy with Read"))
	m.Close()
	// Output:
	// [0.5 1.5 -1]
	// true true
}

func ExampleValue_Text() {
	f, _ := scidb.ParseFormat("(datetime, datetimetz, binary, bool null)")
	row := scidb.Row{
		scidb.DatetimeValue(1548942300),
		scidb.DatetimeTZValue(scidb.DatetimeTZ{Local: 1546344000, Offset: 7200}),
		scidb.BinaryValue([]byte{0xca, 0xfe}),
		scidb.NullValue(3),
	}
	for a, v := range row {
		fmt.Printf("%q\n", v.Text(f.Attr(a)))
	}
	// Output:
	// "2019-01-31 13:45:00"
	// "2019-01-01 12:00:00 +02:00"
	// "0xcafe"
	// ""
}

// Read a SciDB file through the format registry: the format string names
// the format and describes the cells; the table comes in batches, values
// SciDB prints as text as text, nulls as missing reasons.
func Example_format() {
	dir, err := os.MkdirTemp("", "scidb-example")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "cells.bin")
	f, err := scidb.ParseFormat("(int64, datetime null)")
	if err != nil {
		log.Fatal(err)
	}
	w, err := os.Create(path)
	if err != nil {
		log.Fatal(err)
	}
	enc := scidb.NewEncoder(w, f)
	enc.Write(scidb.Row{scidb.Int64Value(1), scidb.DatetimeValue(1548942300)})
	enc.Write(scidb.Row{scidb.Int64Value(2), scidb.NullValue(3)})
	if err := enc.Flush(); err != nil {
		log.Fatal(err)
	}
	w.Close()

	file, err := format.Open(path, &format.Options{Params: map[string]string{"scidb-format": "(int64, datetime null)", "scidb-names": "id,at"}})
	if err != nil {
		log.Fatal(err)
	}
	defer file.Close()
	err = format.ScanTable(file, 1024, func(first int64, cols []format.Column) error {
		fmt.Println(cols[0].Values, cols[1].Values, cols[1].Reason)
		return nil
	})
	if err != nil {
		log.Fatal(err)
	}
	// Output:
	// [1 2] [2019-01-31 13:45:00 ] [-1 3]
}
