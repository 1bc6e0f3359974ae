package csvtable

import (
	"bufio"
	"errors"
	"fmt"
	"io"

	"github.com/mmapkit/mmapkit/format"
	"github.com/mmapkit/mmapkit/internal/unsafeslice"
	"github.com/mmapkit/mmapkit/layout"
)

// hasTextArrays reports whether src holds text that is not a table's
// column (an HDF5 string dataset, a NumPy string array): such records
// are read through format.ReadText, which the table scans do not do.
func hasTextArrays(src format.Source) bool {
	found := false
	format.EachRecord(src, func(_ int, r *format.Record) error {
		if _, ok := format.TextTypeOf(r); ok && r.Kind != format.KindColumn {
			found = true
			return errStopScan
		}
		return nil
	})
	return found
}

var errStopScan = errors.New("stop")

// arrayColumn is one CSV column made of a 1-D record of src: rec holds its
// values, reason (-1 for none) the i8 "<name>.reason" record of its nulls.
type arrayColumn struct {
	rec, reason int
	typ         layout.Type
	text        bool
}

// encodeArrays is Encode for equal-length 1-D records some of which are
// text: numbers read by ReadArray, text by ReadText, a batch of rows at a
// time.
func encodeArrays(w io.Writer, src format.Source) error {
	recs := src.Records()
	var cols []arrayColumn
	for i := range recs {
		r := &recs[i]
		if n := len(cols); n > 0 && cols[n-1].reason < 0 && r.Type == layout.I8 && r.Name == recs[cols[n-1].rec].Name+".reason" {
			cols[n-1].reason = i
			continue
		}
		_, text := format.TextTypeOf(r)
		switch {
		case !text && r.Kind != format.KindArray && r.Kind != format.KindColumn:
			return format.Unrepresentable(r, "a table holds arrays and columns only")
		case !text && !r.Type.Valid():
			return format.Unrepresentable(r, "the type "+r.TypeString()+" cannot be a CSV column")
		case r.Type.IsComplex():
			return format.Unrepresentable(r, "CSV holds no complex numbers")
		case len(r.Shape) != 1:
			return format.Unrepresentable(r, "a table's columns are 1-D")
		case r.Shape[0] != recs[0].Shape[0]:
			return format.Unrepresentable(r, fmt.Sprintf("a table's columns have one length, and %s has %d", format.Describe(&recs[0]), recs[0].Shape[0]))
		}
		cols = append(cols, arrayColumn{rec: i, reason: -1, typ: r.Type, text: text})
	}
	bw := bufio.NewWriterSize(w, 256<<10)
	var line []byte
	for j, c := range cols {
		if j > 0 {
			line = append(line, ',')
		}
		line = AppendField(line, recs[c.rec].Name)
	}
	line = append(line, '\n')
	if _, err := bw.Write(line); err != nil {
		return err
	}
	rows := recs[cols[0].rec].Shape[0]
	texts := make([]*textCursor, len(cols))
	defer func() {
		for _, t := range texts {
			if t != nil {
				t.stop()
			}
		}
	}()
	rowBytes := int64(0)
	for j, c := range cols {
		if c.text {
			texts[j] = readTextAsync(src, c.rec)
		} else {
			rowBytes += int64(c.typ.Size())
		}
	}
	batch := int64(format.BatchRows(1<<14, rowBytes))
	bufs := make([][]byte, len(cols))
	reasons := make([][]byte, len(cols))
	out := make([]format.Column, len(cols))
	host := layout.HostOrder()
	for first := int64(0); first < rows; first += batch {
		k := min(batch, rows-first)
		for j, c := range cols {
			out[j] = format.Column{}
			if c.text {
				v, err := texts[j].next(k)
				if err != nil {
					return err
				}
				out[j].Values = v
			} else {
				if bufs[j] == nil {
					bufs[j] = unsafeslice.AlignedBytes(batch * int64(c.typ.Size()))
				}
				b := bufs[j][:k*int64(c.typ.Size())]
				if err := src.ReadArray(c.rec, b, first, layout.RowMajor, host); err != nil {
					return err
				}
				out[j].Values = layout.SliceOf(c.typ, b)
			}
			if c.reason >= 0 {
				if reasons[j] == nil {
					reasons[j] = make([]byte, batch)
				}
				b := reasons[j][:k]
				if err := src.ReadArray(c.reason, b, first, layout.RowMajor, host); err != nil {
					return err
				}
				out[j].Reason = unsafeslice.Cast[int8](b)
			}
		}
		var err error
		if line, err = appendRows(bw, line, out); err != nil {
			return err
		}
	}
	return bw.Flush()
}

// textCursor hands out the text of one record a batch of rows at a time,
// from a ReadText running beside the row loop (ReadText gives the whole
// record, in batches of its own size).
type textCursor struct {
	name    string
	batches chan []string
	err     chan error
	done    chan struct{}
	cur     []string
	out     []string
}

var errCursorStopped = errors.New("text cursor stopped")

func readTextAsync(src format.Source, i int) *textCursor {
	t := &textCursor{name: format.RecordAt(src, i).Name, batches: make(chan []string, 1), err: make(chan error, 1), done: make(chan struct{})}
	go func() {
		err := format.ReadText(src, i, func(b []string) error {
			// ReadText may reuse b once this returns.
			select {
			case t.batches <- append([]string(nil), b...):
				return nil
			case <-t.done:
				return errCursorStopped
			}
		})
		t.err <- err
		close(t.batches)
	}()
	return t
}

// next returns the next n values; the slice is reused by the next call.
func (t *textCursor) next(n int64) ([]string, error) {
	t.out = t.out[:0]
	for int64(len(t.out)) < n {
		if len(t.cur) == 0 {
			b, ok := <-t.batches
			if !ok {
				if err := <-t.err; err != nil {
					return nil, err
				}
				return nil, fmt.Errorf("record %q: its text ended after %d of its values were due", t.name, len(t.out))
			}
			t.cur = b
		}
		m := min(int(n)-len(t.out), len(t.cur))
		t.out = append(t.out, t.cur[:m]...)
		t.cur = t.cur[m:]
	}
	return t.out, nil
}

// stop ends the ReadText behind t and waits for it.
func (t *textCursor) stop() {
	close(t.done)
	for range t.batches {
	}
}
