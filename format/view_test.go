package format

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"testing"

	"github.com/mmapkit/mmapkit/internal/unsafeslice"
	"github.com/mmapkit/mmapkit/layout"
	"github.com/mmapkit/mmapkit/mmapfile"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// mappedFile is a File of float64 arrays stored one after another in a
// mapped file, each at the offset its record gives: the least a format
// needs to hand out payloads.
type mappedFile struct {
	recs   []Record
	mf     *mmapfile.File
	reg    *mmapfile.Region
	pays   Payloads
	builds int
	// writing counts the calls of the payloads' Writing hook.
	writing int
}

func (m *mappedFile) Records() []Record { return m.recs }
func (m *mappedFile) Format() string    { return "test" }
func (m *mappedFile) Version() string   { return "" }
func (m *mappedFile) Close() error      { return m.mf.Close() }

func (m *mappedFile) ReadArray(i int, dst []byte, first int64, order layout.Order, bo binary.ByteOrder) error {
	p, err := m.Payload(i)
	if err != nil {
		return err
	}
	return p.ReadArray(dst, first, order, bo)
}

func (m *mappedFile) Payload(i int) (*Payload, error) {
	return m.pays.Get(i, func() (*Payload, error) {
		m.builds++
		a := m.recs[i].Array
		return &Payload{Array: a, Data: m.reg, Off: a.Offset,
			Wrap:    func(off int64, err error) error { return fmt.Errorf("test: offset %d: %w", off, err) },
			Writing: func() error { m.writing++; return nil },
		}, nil
	})
}

// newMappedFile writes the records' bytes (data[i] at recs[i].Offset) and
// maps the file in mode.
func newMappedFile(t *testing.T, mode mmapfile.Mode, recs []Record, data [][]byte) *mappedFile {
	t.Helper()
	var b []byte
	for i, r := range recs {
		for int64(len(b)) < r.Offset {
			b = append(b, 0)
		}
		b = append(b[:r.Offset], data[i]...)
	}
	path := filepath.Join(t.TempDir(), "x")
	require.NoError(t, os.WriteFile(path, b, 0o644))
	mf, err := mmapfile.OpenFile(path, mode, nil)
	require.NoError(t, err)
	reg, err := mf.MapAll()
	require.NoError(t, err)
	m := &mappedFile{recs: recs, mf: mf, reg: reg}
	t.Cleanup(func() { _ = mf.Close() })
	return m
}

func f64Bytes(bo binary.AppendByteOrder, v ...float64) []byte {
	var b []byte
	for _, x := range v {
		b = bo.AppendUint64(b, math.Float64bits(x))
	}
	return b
}

func f64Record(name string, off int64, bigEndian bool, shape ...int64) Record {
	return Record{Kind: KindArray, Array: layout.Array{Name: name, Type: layout.F64, Shape: shape, Order: layout.RowMajor,
		BigEndian: bigEndian, Offset: off, Size: 8 * shape[0] * shape[len(shape)-1]}}
}

func TestViewAliasesTheMapping(t *testing.T) {
	m := newMappedFile(t, mmapfile.ReadOnly,
		[]Record{f64Record("a", 0, false, 2, 2), f64Record("big", 64, true, 2), f64Record("odd", 83, false, 1)},
		[][]byte{f64Bytes(binary.LittleEndian, 1, 2, 3, 4), f64Bytes(binary.BigEndian, 5, 6), f64Bytes(binary.LittleEndian, 7)})
	v, err := View[float64](m, 0)
	require.NoError(t, err)
	assert.Equal(t, []float64{1, 2, 3, 4}, v)
	assert.Equal(t, unsafeslice.Addr(m.reg.Bytes()), unsafeslice.Addr(unsafeslice.Bytes(v)), "the view is the mapping")
	again, err := View[float64](m, 0)
	require.NoError(t, err)
	assert.Equal(t, &v[0], &again[0])
	assert.Equal(t, 1, m.builds, "one payload reader per record, kept")
	assert.Equal(t, 0, m.writing, "a read-only view changes nothing")

	for _, c := range []struct {
		i        int
		sentinel error
		off      string
	}{{1, mmapfile.ErrByteOrder, "offset 64"}, {2, mmapfile.ErrMisaligned, "offset 83"}} {
		_, err := View[float64](m, c.i)
		require.ErrorIs(t, err, c.sentinel)
		assert.Contains(t, err.Error(), "use Read, which copies")
		assert.Contains(t, err.Error(), c.off)
	}
	_, err = View[int64](m, 0)
	require.ErrorIs(t, err, mmapfile.ErrTypeMismatch)

	// Read and ReadAt copy: every record, swapped and unaligned alike.
	for i, want := range [][]float64{{1, 2, 3, 4}, {5, 6}, {7}} {
		got, err := Read[float64](m, i)
		require.NoError(t, err)
		assert.Equal(t, want, got)
	}
	part := make([]float64, 1)
	require.NoError(t, ReadAt(m, 1, 1, part))
	assert.Equal(t, []float64{6}, part)
	require.ErrorIs(t, ReadAt(m, 1, 2, part), mmapfile.ErrOutOfRange)
	_, err = Read[int32](m, 0)
	require.ErrorIs(t, err, mmapfile.ErrTypeMismatch)

	require.ErrorIs(t, Set(m, 0, []int64{0, 0}, 9.0), mmapfile.ErrNotWritable)
}

func TestViewNoViewAndUnmapped(t *testing.T) {
	m := newMappedFile(t, mmapfile.ReadOnly, []Record{f64Record("a", 0, false, 1)}, [][]byte{f64Bytes(binary.LittleEndian, 1)})
	p, err := m.Payload(0)
	require.NoError(t, err)
	why := errors.New("a compressed member: use Read")
	p.NoView = why
	_, err = View[float64](m, 0)
	assert.Equal(t, why, err)
	require.ErrorIs(t, Set(m, 0, []int64{0}, 2.0), errors.ErrUnsupported)

	p.NoView, p.Data = nil, &bytesReaderAt{f64Bytes(binary.LittleEndian, 1)}
	_, err = View[float64](m, 0)
	require.ErrorIs(t, err, errors.ErrUnsupported)
	assert.Contains(t, err.Error(), "use Read")
}

type bytesReaderAt struct{ b []byte }

func (r *bytesReaderAt) ReadAt(p []byte, off int64) (int, error) { return copy(p, r.b[off:]), nil }

func TestSetWritesInTheFileOrder(t *testing.T) {
	m := newMappedFile(t, mmapfile.ReadWrite,
		[]Record{f64Record("a", 0, false, 2, 2), f64Record("big", 32, true, 2)},
		[][]byte{f64Bytes(binary.LittleEndian, 1, 2, 3, 4), f64Bytes(binary.BigEndian, 5, 6)})
	require.NoError(t, Set(m, 0, []int64{1, 0}, 30.0))
	require.NoError(t, Set(m, 1, []int64{1}, 60.0))
	assert.Equal(t, 2, m.writing, "each Set announces the change")
	b := m.reg.Bytes()
	assert.Equal(t, f64Bytes(binary.LittleEndian, 1, 2, 30, 4), b[:32])
	assert.Equal(t, f64Bytes(binary.BigEndian, 5, 60), b[32:48])
	require.ErrorIs(t, Set(m, 0, []int64{2, 0}, 1.0), mmapfile.ErrOutOfRange)
	require.ErrorIs(t, Set(m, 0, []int64{0, 0}, int64(1)), mmapfile.ErrTypeMismatch)

	v, err := View[float64](m, 0)
	require.NoError(t, err)
	assert.Equal(t, 3, m.writing, "a writable view announces the change")
	v[3] = 40
	assert.Equal(t, f64Bytes(binary.LittleEndian, 1, 2, 30, 40), b[:32])
}

func TestPayloadsKeepTheLastRecords(t *testing.T) {
	var c Payloads
	builds := 0
	get := func(i int) *Payload {
		p, err := c.Get(i, func() (*Payload, error) { builds++; return &Payload{}, nil })
		require.NoError(t, err)
		return p
	}
	first := get(0)
	assert.Same(t, first, get(0))
	for i := 1; i <= payloadsKept; i++ {
		get(i)
	}
	assert.Equal(t, payloadsKept+1, builds)
	assert.NotSame(t, first, get(0), "the oldest reader went")
	_, err := c.Get(99, func() (*Payload, error) { return nil, errors.ErrUnsupported })
	require.ErrorIs(t, err, errors.ErrUnsupported)
	c.Reset()
	builds = 0
	get(0)
	assert.Equal(t, 1, builds)
}

func TestViewOfAFileWithoutPayloads(t *testing.T) {
	f := noPayloads{}
	_, err := View[float64](f, 0)
	require.ErrorIs(t, err, errors.ErrUnsupported)
	assert.Contains(t, err.Error(), "use Read")
}

// noPayloads is a File of one record that hands out no payloads.
type noPayloads struct{}

func (noPayloads) Records() []Record { return []Record{f64Record("a", 0, false, 1)} }
func (noPayloads) ReadArray(int, []byte, int64, layout.Order, binary.ByteOrder) error {
	return nil
}
func (noPayloads) Format() string  { return "test" }
func (noPayloads) Version() string { return "" }
func (noPayloads) Close() error    { return nil }

// hugeClaim is a File whose one record claims far more elements than its
// source holds, as a compressed record's header can: Read must fail at
// the source's end, not allocate what the header claims.
type hugeClaim struct {
	noPayloads
	served int64
}

func (h *hugeClaim) Records() []Record {
	return []Record{{Kind: KindArray, Array: layout.Array{Name: "a", Type: layout.F64, Shape: []int64{1 << 40}, Offset: -1}}}
}

func (h *hugeClaim) ReadArray(i int, dst []byte, first int64, order layout.Order, bo binary.ByteOrder) error {
	if first >= 1<<20 {
		return fmt.Errorf("the stream ends at element %d: %w", 1<<20, mmapfile.ErrTruncated)
	}
	h.served += int64(len(dst))
	return nil
}

func TestReadGrowsWithWhatIsRead(t *testing.T) {
	h := &hugeClaim{}
	_, err := Read[float64](h, 0)
	require.ErrorIs(t, err, mmapfile.ErrTruncated)
	assert.LessOrEqual(t, h.served, int64(2*readPartBytes), "read in parts, not all 8 TiB at once")
}

// packedFile is a mappedFile whose record 1 is not one run of bytes (its
// payload cannot be viewed): its elements are set through SetBytes.
type packedFile struct {
	*mappedFile
	idx [][]int64
	b   [][]byte
}

func (p *packedFile) Payload(i int) (*Payload, error) {
	q, err := p.mappedFile.Payload(i)
	if err == nil && i == 1 {
		q.NoView = errors.New("packed")
	}
	return q, err
}

func (p *packedFile) SetBytes(i int, idx []int64, b []byte) error {
	if i != 1 {
		return fmt.Errorf("SetBytes of record %d, which is one run of bytes", i)
	}
	p.idx, p.b = append(p.idx, idx), append(p.b, b)
	return nil
}

func TestSetHandsWhatIsNotOneRunToTheFile(t *testing.T) {
	m := newMappedFile(t, mmapfile.ReadWrite,
		[]Record{f64Record("a", 0, false, 2), f64Record("big", 16, true, 2)},
		[][]byte{f64Bytes(binary.LittleEndian, 1, 2), f64Bytes(binary.BigEndian, 5, 6)})
	p := &packedFile{mappedFile: m}
	require.NoError(t, Set(p, 0, []int64{1}, 20.0))
	require.NoError(t, Set(p, 1, []int64{1}, 60.0))
	assert.Equal(t, f64Bytes(binary.LittleEndian, 1, 20), m.reg.Bytes()[:16], "one run: written by the engine")
	assert.Equal(t, f64Bytes(binary.BigEndian, 5, 6), m.reg.Bytes()[16:32], "not one run: left to the file")
	assert.Equal(t, [][]int64{{1}}, p.idx)
	assert.Equal(t, [][]byte{f64Bytes(binary.BigEndian, 60)}, p.b, "the element in the record's byte order")
	require.ErrorIs(t, Set(p, 1, []int64{0}, int32(1)), mmapfile.ErrTypeMismatch)
	assert.Len(t, p.idx, 1, "a Go type that is not the record's never reaches the file")
}

// chunkRows is a hugeClaim read best in rows of 3 Mi elements: it ends
// after its first part.
type chunkRows struct {
	hugeClaim
	firsts, counts []int64
}

func (c *chunkRows) PartElems(int) int64 { return 3 << 20 }

func (c *chunkRows) ReadArray(i int, dst []byte, first int64, order layout.Order, bo binary.ByteOrder) error {
	c.firsts, c.counts = append(c.firsts, first), append(c.counts, int64(len(dst))/8)
	if first > 0 {
		return fmt.Errorf("the stream ends at element %d: %w", first, mmapfile.ErrTruncated)
	}
	return nil
}

func TestReadCutsPartsAsTheFileAsks(t *testing.T) {
	c := &chunkRows{}
	_, err := Read[float64](c, 0)
	require.ErrorIs(t, err, mmapfile.ErrTruncated)
	// Read's own part is 8 Mi float64s: the largest multiple of 3 Mi below.
	assert.Equal(t, []int64{0, 6 << 20}, c.firsts)
	assert.Equal(t, []int64{6 << 20, 6 << 20}, c.counts)
}
