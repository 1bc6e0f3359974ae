package daphne

import (
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strconv"
	"sync"

	"github.com/mmapkit/mmapkit/mmapfile"
)

// Fixed offsets of DAPHNE's single-block matrix layout.
const (
	headerSize      = 18 // DF_header: version, dt, rows u64, cols u64
	bodySize        = 16 // DF_body: rx u64, cx u64
	blockHeaderSize = 9  // DF_body_block: rows u32, cols u32, bt u8
	// DenseDataOffset is where a DAPHNE-written dense matrix's values
	// start (HEADER_BUFFER_SIZE): 18 + vt + 16 + 9 + block vt.
	DenseDataOffset = 45
	// CSRDataOffset is where a DAPHNE-written CSR matrix's rowOffsets start.
	CSRDataOffset = 53
	maxU32        = 1<<32 - 1
)

// File is an open .dbdf file. Its methods are safe for concurrent use.
type File struct {
	name   string
	size   int64
	ra     io.ReaderAt
	mf     *mmapfile.File // nil for NewReader
	opts   Options
	hdr    Header
	blocks []Block // effective blocks (lenient: the first, at (0, 0))

	// frames
	metaLabels bool     // the labels are the .meta schema's
	fileLabels string   // the label bytes of the file, when they are real labels
	labelEnds  []uint32 // the end of each label in fileLabels; nil: col_<i>
	keepLabels bool     // parse keeps the file's label bytes (no .meta to name the columns)
	doc        bool     // the format document's layout (Options.DocumentLayout)
	misfit     bool     // the sizes of the code's layout do not fit the file exactly
	colOff     []int64  // byte offset of each column within a row
	rowSize    int64

	formatState

	mu      sync.Mutex
	payload *mmapfile.Region // dense payload mapping for views and SetElement
	closed  bool

	winMu  sync.RWMutex
	window *mmapfile.Region // the last range withRange mapped, kept for the reads inside it
}

// Open opens a .dbdf file read-only and reads "<path>.meta" beside it if
// present. Only the fixed fields are read at open; payloads are mapped when
// asked for, each call mapping only the bytes it needs. Close releases the
// mappings; views die with them.
func Open(path string, o *Options) (*File, error) {
	return OpenFile(path, mmapfile.ReadOnly, o)
}

// OpenFile is Open in a mode: mmapfile.ReadWrite maps the file read-write
// under an exclusive lock (o.Lock and o.Wait change that), so that Set and
// SetElement can change a dense matrix's values in place. It never creates
// a file: write one with WriteDense, WriteCSR or WriteFrame.
func OpenFile(path string, mode mmapfile.Mode, o *Options) (*File, error) {
	var opts Options
	if o != nil {
		opts = *o
	}
	if opts.Create || opts.Truncate {
		return nil, errAt(path, -1, errors.ErrUnsupported, "OpenFile does not create DAPHNE files; use WriteDense, WriteCSR or WriteFrame")
	}
	mo := opts.Options
	mf, err := mmapfile.OpenFile(path, mode, &mo)
	if err != nil {
		return nil, err
	}
	size, err := mf.Size()
	if err != nil {
		mf.Close()
		return nil, err
	}
	meta, err := readMeta(path+".meta", opts.Lenient)
	if err != nil {
		mf.Close()
		return nil, err
	}
	opts.Meta = meta
	f, err := newFile(path, mf, size, &opts)
	if err != nil {
		mf.Close()
		return nil, err
	}
	f.mf = mf
	return f, nil
}

// maxMetaSize bounds the .meta text read (a frame of a million columns
// needs about 50 MB).
const maxMetaSize = 256 << 20

// readMeta returns the sidecar's bytes, nil if there is none. One too
// large to be a .meta is an error, or in lenient mode ignored.
func readMeta(path string, lenient bool) ([]byte, error) {
	mf, err := os.Open(path)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return nil, nil
		}
		return nil, err
	}
	defer mf.Close()
	// One buffer of the file's size (plus one byte to see growth), not
	// ReadAll's doublings: a frame's .meta can be tens of megabytes.
	hint := int64(512)
	if fi, err := mf.Stat(); err == nil && fi.Size() >= 0 {
		hint = min(fi.Size(), maxMetaSize) + 1
	}
	b := make([]byte, 0, hint)
	for len(b) <= maxMetaSize {
		if len(b) == cap(b) {
			b = slices.Grow(b, min(cap(b), maxMetaSize+1-len(b)))
		}
		n, rerr := mf.Read(b[len(b):cap(b)])
		b = b[:len(b)+n]
		if rerr == io.EOF {
			break
		}
		if rerr != nil {
			return nil, rerr
		}
	}
	if len(b) > maxMetaSize {
		if lenient {
			return nil, nil
		}
		return nil, errAt(path, maxMetaSize, ErrMeta, fmt.Sprintf("over %d bytes: not a .meta file", maxMetaSize))
	}
	return b, nil
}

// NewReader reads a .dbdf file of size bytes from r; o.Meta is the content
// of its .meta sidecar, if there is one. Views are not available (the bytes
// are not mapped); reads copy with r.ReadAt.
func NewReader(r io.ReaderAt, size int64, o *Options) (*File, error) {
	var opts Options
	if o != nil {
		opts = *o
	}
	if size < 0 {
		return nil, errAt("", -1, nil, fmt.Sprintf("negative size %d", size))
	}
	return newFile("", r, size, &opts)
}

func newFile(name string, r io.ReaderAt, size int64, o *Options) (*File, error) {
	f := &File{name: name, size: size, ra: r, opts: *o}
	f.opts.Meta = nil
	f.keepLabels = o.Meta == nil || o.Lenient
	f.doc = o.DocumentLayout
	if err := f.parse(); err != nil {
		// A file too short for the code's layout, or with bytes after it,
		// may be in the document's.
		if errors.Is(err, mmapfile.ErrTruncated) || f.misfit {
			if derr := f.documentReading(); derr != nil {
				return nil, derr
			}
		}
		return nil, err
	}
	if f.misfit {
		// Lenient mode ignored bytes after the data, or the sizes fit
		// no layout exactly: a file in the format document's layout
		// would be read so, wrongly.
		if derr := f.documentReading(); derr != nil {
			return nil, derr
		}
	}
	if o.Meta != nil {
		if err := f.applyMeta(o.Meta); err != nil {
			return nil, err
		}
	}
	if f.metaLabels {
		f.fileLabels, f.labelEnds = "", nil
	}
	return f, nil
}

// ErrDocumentLayout: a file's value type codes mean different types in
// DAPHNE's code and in its format document, and the file fits the
// document's layout where it does not fit the code's (or its .meta names
// the document's type): reading it either way could be wrong, so neither
// is done silently. Options.DocumentLayout reads the document's layout.
var ErrDocumentLayout = errors.New("the file fits the layout of DAPHNE's format document, not of its code")

// documentReading, for a file read in DAPHNE's code's layout whose reading
// failed or needed leniency, tries the format document's layout: when the
// file fits it exactly, the error names both readings of the first value
// type code they read differently.
func (f *File) documentReading() error {
	if f.doc {
		return nil
	}
	g := &File{name: f.name, size: f.size, ra: f.ra, doc: true,
		opts: Options{MaxAlloc: f.opts.MaxAlloc, MaxBlocks: f.opts.MaxBlocks, DocumentLayout: true}}
	if g.parse() != nil {
		return nil
	}
	return f.ambiguous(g, "the file fits the document's layout exactly")
}

// ambiguous returns the error for a file that g read in the document's
// layout: the first value type code whose readings differ, both named.
func (f *File) ambiguous(g *File, why string) error {
	off, code := int64(headerSize), byte(0)
	if g.hdr.Kind == KindFrame {
		for i, t := range g.hdr.ColumnTypes {
			if b, err := f.u8(headerSize+int64(i), "value type"); err == nil && codeReading(b) != t.String() {
				off, code = headerSize+int64(i), b
				break
			}
		}
	} else {
		code, _ = f.u8(headerSize, "value type")
	}
	return f.errf(off, ErrDocumentLayout, "value type code %d is %s in DAPHNE's code but %s in its format document, and %s: read it with Options.DocumentLayout (the format parameter daphne-layout=document) if it was written by the document",
		code, codeReading(code), documentReading(code), why)
}

func defaultLabels(n int) []string {
	l := make([]string, n)
	for i := range l {
		l[i] = defaultLabel(i)
	}
	return l
}

func defaultLabel(i int) string { return "col_" + strconv.Itoa(i) }

// label returns the label of frame column i: from the .meta schema, else
// from the file when it holds real labels, else col_<i>.
func (f *File) label(i int) string {
	if f.metaLabels {
		return f.hdr.Meta.Schema[i].Label
	}
	if f.labelEnds != nil {
		return f.fileLabel(i)
	}
	return defaultLabel(i)
}

func (f *File) fileLabel(i int) string {
	start := uint32(0)
	if i > 0 {
		start = f.labelEnds[i-1]
	}
	return f.fileLabels[start:f.labelEnds[i]]
}

// Close releases the file and its mappings. Slices from View and
// DenseValues (when aliased) must not be used afterwards.
func (f *File) Close() error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.closed {
		return f.errf(-1, mmapfile.ErrClosed, "")
	}
	f.closed = true
	f.payload = nil
	f.pays.Reset()
	f.winMu.Lock()
	f.window = nil // unmapped with the file
	f.winMu.Unlock()
	if f.mf != nil {
		return f.mf.Close()
	}
	return nil
}

// Header returns what was read from the file's fixed fields. The slices
// are copies: changing them does not change the File.
func (f *File) Header() Header {
	h := f.hdr
	h.Blocks = append([]Block(nil), h.Blocks...)
	h.ColumnTypes = append([]ValueType(nil), h.ColumnTypes...)
	h.Relaxed = append([]string(nil), h.Relaxed...)
	return h
}

// Kind returns what the file holds: Dense, CSR or Frame.
func (f *File) Kind() Kind { return f.hdr.Kind }

// Name returns the path the file was opened with ("" for NewReader).
func (f *File) Name() string { return f.name }

// Size returns the data file's size in bytes.
func (f *File) Size() int64 { return f.size }

// Labels returns a frame's column labels: from the .meta schema, else from
// the file itself when it holds real labels (as mmapkit writes them: valid
// UTF-8, no control characters, unique), else col_0, col_1, … (DAPHNE
// writes pointer bytes in their place). nil for matrices.
func (f *File) Labels() []string {
	if f.hdr.Kind != KindFrame {
		return nil
	}
	l := make([]string, len(f.hdr.ColumnTypes))
	for i := range l {
		l[i] = f.label(i)
	}
	return l
}
