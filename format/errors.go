package format

import (
	"errors"
	"io/fs"

	"github.com/mmapkit/mmapkit/mmapfile"
	"strconv"
	"strings"
)

// Errors of the registry and of every format. A condition that every
// format shares has one sentinel, defined once and wrapped by each
// package's errors, so that one errors.Is test works whatever the format:
// a missing record is ErrNoRecord (here); a path that cannot be mapped
// mmapfile.ErrNotRegular; a file cut short mmapfile.ErrTruncated; text
// that does not parse layout.ErrSyntax, a literal out of its type's range
// layout.ErrRange; a size beyond what memory, the address space or a
// format's fields can hold mmapfile.ErrTooLarge; a closed file
// mmapfile.ErrClosed (and the other sentinels of mmapfile).
var (
	// ErrUnknownFormat: no registered format has this name, extension or
	// first bytes.
	ErrUnknownFormat = errors.New("unknown format")
	// ErrNoRecord: no record of the file has this name (or index): an
	// array, member, key, value, column or attribute that is not there.
	ErrNoRecord = errors.New("no such record")
	// ErrNotRepresentable: the target format cannot hold a record (a
	// complex array in DAPHNE, a 3-D array in a SciDB file); the error
	// names the record and what the format lacks.
	ErrNotRepresentable = errors.New("the target format cannot hold this record")
)

// FileError is the one error about a file that every format package
// reports: each package's FormatError embeds it (so that errors.As finds
// the package's own type) and adds the places only its format has. Its
// message reads
//
//	<pkg>: <file>: [<key>: ][record "<name>": ]offset N[ (line L, column C)]: <msg>[: <cause>]
//
// where each bracketed part appears when it is known, and the cause, Err,
// is always shown (a sentinel's text included: the message says what
// differs from it, not the same again).
//
// It lives in this package, not in mmapfile, because its places are those
// of formats (records, keys of a store, lines of text), which the mmap
// layer knows nothing of, and every format package imports this one;
// mmapfile.Error answers the same Located interface.
type FileError struct {
	Pkg    string // the reporting package ("npy"); "" for the registry's own errors, which start with the file
	File   string // the name the file (or store) was opened with; "" for input without a name
	Key    string // the key of the file inside a store ("a/c/0/1", ".zarray"); "" if none
	Record string // the name of the record the error is about; "" if none
	Offset int64  // byte offset in the file (or the key's file); -1 if none
	Line   int    // 1-based line of Offset in text input; 0 if not known
	Col    int    // 1-based column (in bytes) of Offset on Line; 0 if not known
	Msg    string // what is wrong; "" when the cause says all
	Err    error  // the sentinel or underlying error; may be nil
}

// Error returns the message described on FileError.
func (e *FileError) Error() string {
	var b strings.Builder
	if e.Pkg != "" {
		b.WriteString(e.Pkg)
		b.WriteString(": ")
	}
	if e.File != "" {
		b.WriteString(e.File)
		b.WriteString(": ")
	}
	b.WriteString(e.Detail())
	return b.String()
}

// Detail is the message after "<pkg>: <file>: ", for a program that names
// the file itself (as a command line's "mmapkit: <file>: <detail>").
func (e *FileError) Detail() string {
	var parts []string
	if e.Key != "" {
		parts = append(parts, e.Key)
	}
	if e.Record != "" {
		parts = append(parts, "record "+strconv.Quote(e.Record))
	}
	if e.Offset >= 0 {
		at := "offset " + strconv.FormatInt(e.Offset, 10)
		switch {
		case e.Line > 0 && e.Col > 0:
			at += " (line " + strconv.Itoa(e.Line) + ", column " + strconv.Itoa(e.Col) + ")"
		case e.Line > 0:
			at += " (line " + strconv.Itoa(e.Line) + ")"
		}
		parts = append(parts, at)
	}
	if e.Msg != "" {
		parts = append(parts, e.Msg)
	}
	if e.Err != nil {
		parts = append(parts, cause(e.Err, e.File))
	}
	return strings.Join(parts, ": ")
}

// cause is err's text, where an error about file that err is or wraps (an
// mmapfile.Error, another format error of the file, an *fs.PathError of
// the file) says what it says without its package and file, which the
// message has named already.
func cause(err error, file string) string {
	if pe, ok := err.(*fs.PathError); ok && file != "" && pe.Path == file {
		return pe.Err.Error()
	}
	var l Located
	if file == "" || !errors.As(err, &l) {
		return err.Error()
	}
	if f, _ := l.Where(); f != file {
		return err.Error()
	}
	if l == err {
		return l.Detail()
	}
	return strings.Replace(err.Error(), l.Error(), l.Detail(), 1)
}

// Unwrap returns Err.
func (e *FileError) Unwrap() error { return e.Err }

// Where returns the file and the byte offset (-1: none) the error is
// about.
func (e *FileError) Where() (file string, offset int64) { return e.File, e.Offset }

// Located is implemented by errors that know which file they are about and
// where in it: every format package's FormatError (through FileError),
// mmapfile.Error, and the errors of this package's registry. Use errors.As
// to find one in a chain.
type Located interface {
	error
	// Where returns the file the error is about and the byte offset in
	// it, -1 if none.
	Where() (file string, offset int64)
	// Detail is the message without the reporting package and the file.
	Detail() string
}

// fileError is an error of the registry about path.
func fileError(path string, err error, msg string) *FileError {
	return &FileError{File: path, Offset: -1, Msg: msg, Err: err}
}

// IndexError is err, an index that does not fit a record's shape (from
// layout.CheckIndex or layout.Index), as a format reports it: its text is
// err's alone, naming the real cause, and errors.Is still finds
// mmapfile.ErrOutOfRange, which such errors have always wrapped.
func IndexError(err error) error { return &indexError{err} }

type indexError struct{ err error }

func (e *indexError) Error() string   { return e.err.Error() }
func (e *indexError) Unwrap() []error { return []error{e.err, mmapfile.ErrOutOfRange} }
