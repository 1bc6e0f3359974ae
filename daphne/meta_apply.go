package daphne

import (
	"errors"
	"fmt"
)

// applyMeta parses the sidecar and, in strict mode, checks it against the
// data file. Frames take their labels from it.
func (f *File) applyMeta(b []byte) error {
	metaName := f.name + ".meta"
	if f.name == "" {
		metaName = ".meta"
	}
	m, err := ParseMeta(b)
	if err != nil {
		var fe *FormatError
		if errors.As(err, &fe) {
			fe.File = metaName
		}
		if f.opts.Lenient {
			f.relax("%s ignored: %v", metaName, err)
			return nil
		}
		return err
	}
	if err := f.checkMeta(m); err != nil {
		if derr := f.metaSaysDocument(m); derr != nil {
			return derr
		}
		if f.opts.Lenient {
			f.relax("%s ignored: %s", metaName, err.Error())
			return nil
		}
		return errAt(metaName, -1, fmt.Errorf("%w: %w", ErrMeta, err), "")
	}
	f.hdr.Meta = m
	f.metaLabels = f.hdr.Kind == KindFrame
	return nil
}

func (f *File) checkMeta(m *Meta) error {
	h := &f.hdr
	if m.NumRows != h.Rows {
		return fmt.Errorf(`key "numRows": %d, the file has %d rows`, m.NumRows, h.Rows)
	}
	if m.NumCols != h.Cols {
		return fmt.Errorf(`key "numCols": %d, the file has %d cols`, m.NumCols, h.Cols)
	}
	if h.Kind != KindFrame {
		if m.Schema != nil {
			return fmt.Errorf(`key "schema": a frame's schema for a %v matrix`, h.Kind)
		}
		vt, ok := ParseValueType(m.ValueType)
		if !ok || vt != h.ValueType {
			return fmt.Errorf(`key "valueType": %q, the file holds %v`, m.ValueType, h.ValueType)
		}
		if h.Kind == KindCSR && m.NumNonZeros >= 0 && len(f.blocks) == 1 && f.blocks[0].Type == BodySparse && uint64(m.NumNonZeros) != f.blocks[0].NNZ {
			return fmt.Errorf(`key "numNonZeros": %d, the file has %d`, m.NumNonZeros, f.blocks[0].NNZ)
		}
		return nil
	}
	if m.Schema == nil {
		return fmt.Errorf(`key "schema": missing for a frame`)
	}
	if uint64(len(m.Schema)) != h.Cols {
		return fmt.Errorf(`key "schema": %d entries for %d columns`, len(m.Schema), h.Cols)
	}
	for i, c := range m.Schema {
		vt, ok := ParseValueType(c.ValueType)
		if !ok {
			// DAPHNE falls back to the top-level valueType.
			if vt, ok = ParseValueType(m.ValueType); !ok {
				return fmt.Errorf(`key "schema": entry %d valueType %q is unknown and there is no top-level valueType`, i, c.ValueType)
			}
		}
		if vt != h.ColumnTypes[i] {
			return fmt.Errorf(`key "schema": entry %d valueType %v, the file's column %d is %v`, i, vt, i, h.ColumnTypes[i])
		}
	}
	if i, j, dup := firstDuplicate(len(m.Schema), func(i int) string { return m.Schema[i].Label }); dup {
		return fmt.Errorf(`key "schema": label %q of entry %d repeats entry %d`, m.Schema[i].Label, i, j)
	}
	return nil
}

// metaSaysDocument reports a .meta whose value types are the format
// document's readings of the file's codes rather than the code's: a file
// written by the document's numbering, which must not be read with the
// code's, in lenient mode either.
func (f *File) metaSaysDocument(m *Meta) error {
	if f.doc {
		return nil
	}
	h := &f.hdr
	says := func(name string, code byte) bool {
		vt, ok := ParseValueType(name)
		d, dok := documentValueType(code)
		return ok && dok && vt == d && vt != ValueType(code)
	}
	if h.Kind != KindFrame {
		if code := byte(h.ValueType); says(m.ValueType, code) {
			return f.errf(headerSize, ErrDocumentLayout, "value type code %d is %s in DAPHNE's code but %s in its format document, and the .meta says %s: read it with Options.DocumentLayout (the format parameter daphne-layout=document) if it was written by the document",
				code, codeReading(code), documentReading(code), m.ValueType)
		}
		return nil
	}
	for i, c := range m.Schema {
		if i < len(h.ColumnTypes) && says(c.ValueType, byte(h.ColumnTypes[i])) {
			code := byte(h.ColumnTypes[i])
			return f.errf(headerSize+int64(i), ErrDocumentLayout, "value type code %d of column %d is %s in DAPHNE's code but %s in its format document, and the .meta says %s: read it with Options.DocumentLayout (the format parameter daphne-layout=document) if it was written by the document",
				code, i, codeReading(code), documentReading(code), c.ValueType)
		}
	}
	return nil
}
