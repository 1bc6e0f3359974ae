package format

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"

	"github.com/mmapkit/mmapkit/mmapfile"
)

// Format is what a format package registers: how to recognise its files,
// open them and write them.
type Format struct {
	// Name is the format's name ("abf"), as Options.Format and the
	// command line's --format take it.
	Name string
	// Description is one line for listings: what the format is.
	Description string
	// Extensions are the file name extensions of the format, lower case
	// with the dot (".abf"). For formats whose files are directories
	// (Dir), a directory with one of these extensions is of this format.
	Extensions []string
	// Sniff reports whether head, the first bytes of a file (up to
	// SniffLen, fewer for short files), is this format's. nil: the format
	// is never detected from bytes.
	Sniff func(head []byte) bool
	// Probe reports whether the file r of size bytes is this format's,
	// for formats whose mark can lie past the first SniffLen bytes (HDF5's
	// signature after a user block). Detect calls it only once no
	// format's Sniff claimed the head; it should read little.
	Probe func(r io.ReaderAt, size int64) bool
	// Dir: the format's files are directories. SniffDir reports whether
	// the directory at path is one.
	Dir      bool
	SniffDir func(path string) bool
	// Open opens a file (or store) read-only or read-write. Through
	// format.Open, o.Options.File is the descriptor detection opened and
	// read the head of: Open maps that one (mmapfile.OpenFile adopts it),
	// so that a path is opened once; on success it is the File's, on error
	// still the caller's. Directory stores get their path only.
	Open func(path string, mode mmapfile.Mode, o *Options) (File, error)
	// Write creates path holding the records of src, replacing an
	// existing file only once the new one is complete (a failed write
	// leaves what was there). nil: the format cannot be written.
	Write func(path string, src Source, o *Options) error
	// Encode writes the records of src to w front to back, for formats
	// whose files can be streamed (Futhark values, CSV): what a command
	// line writes to standard output. nil: the format cannot be streamed.
	Encode func(w io.Writer, src Source, o *Options) error
	// Params are the format's own options, read through Options.Params.
	Params []Param
	// ParseParams, if set, parses the values of the format's options of
	// reading or of writing (write): what the format's Open or Write
	// works from, or an error for values it cannot take (an unknown
	// version, a bad alignment, options that exclude each other). Open
	// and Write get the result through ParsedParams: parsed once by a
	// command line's CheckParams, which reports such errors before
	// anything is read or written, else when they need it.
	ParseParams func(params map[string]string, write bool) (any, error)
}

// CheckParams parses the format's options of reading or of writing
// (write) in o.Params with its ParseParams, and keeps the result in o for
// the format's Open or Write (ParsedParams), so that a command line
// reports bad options as usage errors, before anything is read or
// written, and they are parsed once.
func (f Format) CheckParams(o *Options, write bool) error {
	if f.ParseParams == nil || o == nil {
		return nil
	}
	v, err := f.ParseParams(o.Params, write)
	if err != nil {
		return err
	}
	if o.parsed == nil {
		o.parsed = map[parsedKey]any{}
	}
	o.parsed[parsedKey{f.Name, write}] = v
	return nil
}

// ParamsOfWriting makes a Format.ParseParams for a format whose own
// options are all options of writing: parse reads them for Write, and
// reading takes none (nil).
func ParamsOfWriting[T any](parse func(params map[string]string) (T, error)) func(params map[string]string, write bool) (any, error) {
	return func(params map[string]string, write bool) (any, error) {
		if !write {
			return nil, nil
		}
		return parse(params)
	}
}

// parsedKey names what CheckParams kept: a format's options of reading or
// of writing.
type parsedKey struct {
	format string
	write  bool
}

// ParsedParams returns what the format registered as name made of the
// options of reading or of writing (write) in o.Params: the value its
// ParseParams returned to CheckParams, else parsed now. T is the type of
// that value; a format without ParseParams gives T's zero value.
func ParsedParams[T any](o *Options, name string, write bool) (T, error) {
	var zero T
	var v any
	if o != nil && o.parsed != nil {
		v = o.parsed[parsedKey{name, write}]
	}
	if v == nil {
		f, ok := Lookup(name)
		if !ok || f.ParseParams == nil {
			return zero, nil
		}
		var params map[string]string
		if o != nil {
			params = o.Params
		}
		var err error
		if v, err = f.ParseParams(params, write); err != nil || v == nil {
			return zero, err
		}
	}
	t, ok := v.(T)
	if !ok {
		return zero, fmt.Errorf("format: the options of %s parse to %T, not %T", name, v, zero)
	}
	return t, nil
}

// Param declares one of a format's own options.
type Param struct {
	// Name is the option's name ("abf-version"); command lines take it as
	// --NAME.
	Name string
	// Usage is one line of help.
	Usage string
	// Write: an option of writing; otherwise of reading (opening).
	Write bool
	// Switch: a yes/no option; its value is "true" when given.
	Switch bool
	// NoValue is the value when the option is given without one ("" for
	// options that always take one).
	NoValue string
	// Implies: giving this option when reading says the file is of this
	// format (SciDB files carry no header, so --scidb-format names both
	// the format and its cells).
	Implies bool
	// Required: files of the format cannot be read without this option.
	Required bool
}

// SniffLen is how many leading bytes Detect reads for Sniff.
const SniffLen = 512

var (
	mu       sync.RWMutex
	registry = map[string]Format{}
)

// Register makes a format available to Open, Write and Convert. Format
// packages call it from init; a second registration of a name panics, as
// sql.Register does.
func Register(f Format) {
	mu.Lock()
	defer mu.Unlock()
	if f.Name == "" || f.Open == nil {
		panic("format: Register of a format without a name or Open")
	}
	if _, dup := registry[f.Name]; dup {
		panic("format: Register called twice for " + f.Name)
	}
	registry[f.Name] = f
}

// Formats returns every registered format, sorted by name.
func Formats() []Format {
	mu.RLock()
	defer mu.RUnlock()
	out := make([]Format, 0, len(registry))
	for _, f := range registry {
		out = append(out, f)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// Lookup returns the format registered under name.
func Lookup(name string) (Format, bool) {
	mu.RLock()
	defer mu.RUnlock()
	f, ok := registry[name]
	return f, ok
}

// ForName returns the format a file name's extension says, for a file to
// be written.
func ForName(path string) (Format, bool) {
	ext := strings.ToLower(filepath.Ext(strings.TrimRight(path, `/\`)))
	if ext == "" {
		return Format{}, false
	}
	for _, f := range Formats() {
		for _, e := range f.Extensions {
			if e == ext {
				return f, true
			}
		}
	}
	return Format{}, false
}

// Detect decides the format of an existing file: o.Format if set, else a
// format whose Implies parameter is given, else the extension, else the
// first bytes (or, for a directory, the formats' SniffDir).
func Detect(path string, o *Options) (Format, error) {
	in, err := examine(path, mmapfile.ReadOnly)
	if err != nil {
		return Format{}, err
	}
	defer in.close()
	return in.detect(o)
}

// examined is a path as detection saw it: its FileInfo, and for a file the
// descriptor opened once and its first bytes, which the format's Open then
// maps (through Options.File).
type examined struct {
	path string
	info os.FileInfo
	file *os.File // nil for a directory
	head []byte
}

// examine stats path, refuses what cannot be mapped, and opens a file once
// (read-write for mode ReadWrite) to read its first SniffLen bytes.
func examine(path string, mode mmapfile.Mode) (*examined, error) {
	// Stat before opening: opening a FIFO blocks.
	fi, err := os.Stat(path)
	if err != nil {
		return nil, err
	}
	in := &examined{path: path, info: fi}
	if fi.IsDir() {
		return in, nil
	}
	if err := mmapfile.CheckRegular(path, fi, nil); err != nil {
		return nil, err
	}
	flag := os.O_RDONLY
	if mode == mmapfile.ReadWrite {
		flag = os.O_RDWR
	}
	if in.file, err = os.OpenFile(path, flag, 0); err != nil {
		return nil, err
	}
	if err := mmapfile.CheckRegular(path, fi, in.file); err != nil {
		in.close()
		return nil, err
	}
	head := make([]byte, min(SniffLen, max(fi.Size(), 0)))
	n, err := in.file.ReadAt(head, 0)
	if err != nil && !errors.Is(err, io.EOF) {
		in.close()
		return nil, err
	}
	in.head = head[:n]
	return in, nil
}

// close closes the descriptor, unless a format's Open took it.
func (in *examined) close() {
	if in.file != nil {
		in.file.Close()
	}
}

// detect is Detect of what was examined.
func (in *examined) detect(o *Options) (Format, error) {
	path := in.path
	if o != nil && o.Format != "" {
		f, ok := Lookup(o.Format)
		if !ok {
			return Format{}, fileError(path, fmt.Errorf("%w %q (registered: %s)", ErrUnknownFormat, o.Format, strings.Join(Names(), ", ")), "")
		}
		return f, nil
	}
	if o != nil {
		for _, f := range Formats() {
			for _, p := range f.Params {
				if p.Implies && !p.Write && o.Params[p.Name] != "" {
					return f, nil
				}
			}
		}
	}
	isDir := in.info.IsDir()
	if f, ok := ForName(path); ok && f.Dir == isDir {
		return f, nil
	}
	if isDir {
		for _, f := range Formats() {
			if f.Dir && f.SniffDir != nil && f.SniffDir(path) {
				return f, nil
			}
		}
		return Format{}, fileError(path, ErrUnknownFormat, "is a directory that holds no store of a known format")
	}
	if len(in.head) == 0 {
		// No bytes tell a format, and a format whose empty file is valid
		// (ABF's) would claim every empty file.
		return Format{}, fileError(path, ErrUnknownFormat, "empty file: no bytes to tell its format by; name it by its format's extension or give --format")
	}
	for _, f := range Formats() {
		if f.Sniff != nil && f.Sniff(in.head) {
			return f, nil
		}
	}
	for _, f := range Formats() {
		if f.Probe != nil && f.Probe(in.file, in.info.Size()) {
			return f, nil
		}
	}
	return Format{}, fileError(path, ErrUnknownFormat, "cannot tell the format from the file's name or bytes")
}

// Names lists the registered format names, sorted.
func Names() []string {
	var out []string
	for _, f := range Formats() {
		out = append(out, f.Name)
	}
	return out
}

// Open opens a file of any registered format read-only; see Detect for how
// the format is chosen.
func Open(path string, o *Options) (File, error) {
	return OpenFile(path, mmapfile.ReadOnly, o)
}

// OpenFile opens a file of any registered format in mode. The path is
// opened once: the descriptor that detection read is the one the format
// maps (Options.File); a directory store is opened by its path. A file
// opened read-write is the one at path once its lock is held: if the path
// was replaced while the open waited for the lock (Options.Wait), the new
// file is opened instead, as mmapfile.OpenFile does.
func OpenFile(path string, mode mmapfile.Mode, o *Options) (File, error) {
	if o != nil && o.Options.File != nil {
		// The caller's descriptor: detect from the path, map that.
		f, err := Detect(path, o)
		if err != nil {
			return nil, err
		}
		return f.Open(path, mode, o)
	}
	for try := 0; ; try++ {
		file, err := openOnce(path, mode, o)
		if !errors.Is(err, errReplaced) {
			return file, err
		}
		if try == 100 {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
	}
}

// errReplaced: the path was replaced while the open waited for its lock.
var errReplaced = errors.New("replaced while the open waited for its lock")

// openOnce is OpenFile's one try.
func openOnce(path string, mode mmapfile.Mode, o *Options) (File, error) {
	in, err := examine(path, mode)
	if err != nil {
		return nil, err
	}
	f, err := in.detect(o)
	if err != nil {
		in.close()
		return nil, err
	}
	if in.file != nil {
		var oo Options
		if o != nil {
			oo = *o
		}
		oo.Options.File = in.file
		o = &oo
	}
	file, err := f.Open(path, mode, o)
	if err != nil {
		// On error the descriptor is still ours (a format that closed
		// it makes this a no-op).
		in.close()
		return nil, err
	}
	if in.file != nil && mode == mmapfile.ReadWrite {
		held, herr := in.file.Stat()
		now, nerr := os.Stat(path)
		if herr == nil && (nerr != nil || !os.SameFile(held, now)) {
			file.Close()
			return nil, errReplaced
		}
	}
	return file, nil
}

// Write creates path in the format o.Format names, else the one its
// extension says, holding the records of src.
func Write(path string, src Source, o *Options) error {
	var f Format
	var ok bool
	if o != nil && o.Format != "" {
		f, ok = Lookup(o.Format)
	} else {
		f, ok = ForName(path)
	}
	if !ok {
		return fileError(path, ErrUnknownFormat, "name the output format")
	}
	if f.Write == nil {
		return fileError(path, fmt.Errorf("%w: %s files cannot be written", errors.ErrUnsupported, f.Name), "")
	}
	return f.Write(path, rootRelative(src), o)
}

// rootRelative returns src with the leading "/" of its records' names
// dropped: such names are paths from the root of a hierarchical store
// ("/x", "/group/y": Zarr's arrays), which other formats hold as "x" and
// "group/y", and which a store's writer puts back where they were. The
// root array "/" keeps its name, and so does every record if dropping
// would make two names equal.
func rootRelative(src Source) Source {
	// Most sources have no such name: find that out without the list.
	if EachRecord(src, func(_ int, r *Record) error {
		if len(r.Name) > 1 && r.Name[0] == '/' {
			return errStop
		}
		return nil
	}) == nil {
		return src
	}
	names := make([]string, 0, NumRecords(src))
	_ = EachRecord(src, func(_ int, r *Record) error {
		if len(r.Name) > 1 && r.Name[0] == '/' {
			names = append(names, r.Name[1:])
		} else {
			names = append(names, r.Name)
		}
		return nil
	})
	renamed, err := Rename(src, names)
	if err != nil {
		return src
	}
	return renamed
}

// Convert writes every record of the file in into out, converting between
// formats: in is opened with inOpts, out written with outOpts (see Open and
// Write for how their formats are chosen).
func Convert(in, out string, inOpts, outOpts *Options) error {
	f, err := Open(in, inOpts)
	if err != nil {
		return err
	}
	werr := Write(out, f, outOpts)
	cerr := f.Close()
	if werr != nil {
		return werr
	}
	return cerr
}

// errStop ends an EachRecord early.
var errStop = errors.New("stop")

// Find returns the index of the record named name, accepting the name with
// or without a leading "/" (Zarr's names have one). A name that no record
// has is an error wrapping ErrNoRecord, which names the file when src
// has a Name method (as every format's File has).
func Find(src Source, name string) (int, error) {
	found := -1
	match := func(eq func(string) bool) {
		_ = EachRecord(src, func(i int, r *Record) error {
			if eq(r.Name) {
				found = i
				return errStop
			}
			return nil
		})
	}
	match(func(s string) bool { return s == name })
	if found < 0 {
		bare := strings.TrimPrefix(name, "/")
		match(func(s string) bool { return strings.TrimPrefix(s, "/") == bare })
	}
	if found < 0 {
		if r, ok := src.(Resolver); ok {
			i, err := r.Resolve(name)
			if err != nil && errors.Is(err, ErrNoRecord) {
				err = fmt.Errorf("%w (%s)", err, recordNames(src, maxNamesListed))
			}
			return i, err
		}
		return -1, noRecord(src, name)
	}
	return found, nil
}

// maxNamesListed is how many names an error about a missing record lists.
const maxNamesListed = 10

// recordNames says which records src has, for an error about a name it
// does not have: "the file has "a", "b" and 3 more" with at most max names
// quoted, "the file has no records" for none.
func recordNames(src Source, max int) string {
	n := NumRecords(src)
	if n == 0 {
		return "the file has no records"
	}
	var b strings.Builder
	b.WriteString("the file has ")
	shown := min(n, max)
	for i := 0; i < shown; i++ {
		switch {
		case i == 0:
		case i == n-1:
			b.WriteString(" and ")
		default:
			b.WriteString(", ")
		}
		b.WriteString(strconv.Quote(RecordAt(src, i).Name))
	}
	if shown < n {
		fmt.Fprintf(&b, " and %d more", n-shown)
	}
	return b.String()
}

// NoRecord is ErrNoRecord naming the record: "no such record "x"". Format
// packages use it as the cause of their FormatError for a name (or index)
// that their file does not have.
func NoRecord(name string) error { return fmt.Errorf("%w %q", ErrNoRecord, name) }

// noRecord is NoRecord about src's file, where src names one.
func noRecord(src Source, name string) error {
	err := &FileError{Offset: -1, Err: fmt.Errorf("%w; %s", NoRecord(name), recordNames(src, maxNamesListed))}
	if n, ok := src.(interface{ Name() string }); ok {
		err.File = n.Name()
	}
	return err
}
