package mmapfile

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/mmapkit/mmapkit/internal/unsafeslice"
	"github.com/mmapkit/mmapkit/layout"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// writeFile creates a file of n bytes where byte i is byte(i*7+3).
func writeFile(t testing.TB, n int) (string, []byte) {
	t.Helper()
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(i*7 + 3)
	}
	p := filepath.Join(t.TempDir(), "data.bin")
	require.NoError(t, os.WriteFile(p, b, 0o644))
	return p, b
}

func TestMapAtAnyOffset(t *testing.T) {
	ps := os.Getpagesize()
	p, want := writeFile(t, 3*ps+123)
	f, err := Open(p)
	require.NoError(t, err)
	defer f.Close()
	for _, c := range []struct{ off, n int64 }{
		{0, int64(len(want))}, {1, 10}, {int64(ps) - 1, 2}, {int64(ps), int64(ps)}, {int64(2*ps + 77), int64(ps + 46)}, {int64(len(want)) - 1, 1},
	} {
		r, err := f.Map(c.off, c.n)
		require.NoError(t, err, "%+v", c)
		assert.Equal(t, want[c.off:c.off+c.n], r.Bytes(), "%+v", c)
		assert.Equal(t, c.off, r.Offset())
		assert.Equal(t, int(c.n), r.Len())
		require.NoError(t, r.Unmap())
		assert.Nil(t, r.Bytes())
		assert.ErrorIs(t, r.Unmap(), ErrClosed)
	}
	_, err = f.Map(int64(len(want))-1, 2)
	assert.ErrorIs(t, err, ErrOutOfRange)
	_, err = f.Map(-1, 2)
	assert.ErrorIs(t, err, ErrOutOfRange)
	_, err = f.Map(math.MaxInt64, 2)
	assert.ErrorIs(t, err, ErrOutOfRange)
}

func TestEmptyFileAndRegion(t *testing.T) {
	p := filepath.Join(t.TempDir(), "empty")
	require.NoError(t, os.WriteFile(p, nil, 0o644))
	f, err := Open(p)
	require.NoError(t, err)
	r, err := f.MapAll()
	require.NoError(t, err)
	require.NotNil(t, r.Bytes())
	assert.Len(t, r.Bytes(), 0)
	xs, err := View[float64](r, 0, 0, binary.LittleEndian)
	require.NoError(t, err)
	require.NotNil(t, xs)
	assert.Len(t, xs, 0)
	_, err = View[float64](r, 0, 1, binary.LittleEndian)
	assert.ErrorIs(t, err, ErrOutOfRange)
	require.NoError(t, f.Close())
}

func TestViewZeroCopy(t *testing.T) {
	p, want := writeFile(t, 1<<16)
	f, err := Open(p)
	require.NoError(t, err)
	defer f.Close()
	r, err := f.MapAll()
	require.NoError(t, err)
	base := unsafeslice.Addr(r.Bytes())
	xs, err := View[uint64](r, 64, 100, binary.LittleEndian)
	require.NoError(t, err)
	assert.Equal(t, base+64, unsafeslice.AddrOf(xs), "view must alias the mapping")
	assert.Equal(t, binary.LittleEndian.Uint64(want[64+8*5:]), xs[5])

	i128, err := View[layout.Int128](r, 32, 3, binary.LittleEndian)
	require.NoError(t, err)
	assert.Equal(t, base+32, unsafeslice.AddrOf(i128))
	assert.Equal(t, binary.LittleEndian.Uint64(want[48:]), i128[1].Lo)

	// The project's other element types alias the mapping too.
	u128, err := View[layout.Uint128](r, 16, 2, binary.LittleEndian)
	require.NoError(t, err)
	assert.Equal(t, base+16, unsafeslice.AddrOf(u128))
	assert.Equal(t, binary.LittleEndian.Uint64(want[40:]), u128[1].Hi)
	f16, err := View[layout.Float16](r, 2, 3, binary.LittleEndian)
	require.NoError(t, err)
	assert.Equal(t, base+2, unsafeslice.AddrOf(f16))
	assert.Equal(t, layout.Float16(binary.LittleEndian.Uint16(want[4:])), f16[1])
	chars, err := View[layout.Char](r, 4, 2, binary.LittleEndian)
	require.NoError(t, err)
	assert.Equal(t, base+4, unsafeslice.AddrOf(chars))
	assert.Equal(t, layout.Char(binary.LittleEndian.Uint32(want[8:])), chars[1])

	allocs := testing.AllocsPerRun(100, func() {
		v, err := View[float64](r, 8, 1000, binary.LittleEndian)
		if err != nil || len(v) != 1000 {
			panic("view failed")
		}
	})
	assert.Equal(t, 0.0, allocs, "the view path must not allocate")
}

func TestViewErrors(t *testing.T) {
	p, _ := writeFile(t, 4096)
	f, err := Open(p)
	require.NoError(t, err)
	defer f.Close()
	r, err := f.Map(0, 4096)
	require.NoError(t, err)
	cases := []struct {
		name string
		view func() error
		err  error
		off  int64
	}{
		{"misaligned f64", func() error { _, err := View[float64](r, 4, 2, binary.LittleEndian); return err }, ErrMisaligned, 4},
		{"misaligned i16", func() error { _, err := View[int16](r, 1, 1, binary.LittleEndian); return err }, ErrMisaligned, 1},
		{"past end", func() error { _, err := View[uint32](r, 4092, 2, binary.LittleEndian); return err }, ErrOutOfRange, 4092},
		{"negative", func() error { _, err := View[uint32](r, -4, 1, binary.LittleEndian); return err }, ErrOutOfRange, -4},
		{"count overflow", func() error { _, err := View[uint64](r, 0, math.MaxInt, binary.LittleEndian); return err }, ErrOutOfRange, 0},
		{"big-endian f32", func() error { _, err := View[float32](r, 0, 1, binary.BigEndian); return err }, ErrByteOrder, 0},
		{"bool bytes", func() error { _, err := View[bool](r, 0, 16, binary.LittleEndian); return err }, ErrInvalidBool, 0},
	}
	for _, c := range cases {
		err := c.view()
		require.ErrorIs(t, err, c.err, c.name)
		var e *Error
		require.True(t, errors.As(err, &e), c.name)
		assert.Equal(t, c.off, e.Offset, c.name)
	}
	// One-byte types ignore byte order.
	u8, err := View[uint8](r, 3, 5, binary.BigEndian)
	require.NoError(t, err)
	assert.Len(t, u8, 5)
}

func TestViewBool(t *testing.T) {
	p := filepath.Join(t.TempDir(), "b")
	require.NoError(t, os.WriteFile(p, []byte{0, 1, 1, 0, 2, 1}, 0o644))
	f, err := Open(p)
	require.NoError(t, err)
	defer f.Close()
	r, err := f.MapAll()
	require.NoError(t, err)
	bs, err := View[bool](r, 0, 4, binary.LittleEndian)
	require.NoError(t, err)
	assert.Equal(t, []bool{false, true, true, false}, bs)
	_, err = View[bool](r, 0, 6, binary.LittleEndian)
	var e *Error
	require.ErrorAs(t, err, &e)
	assert.ErrorIs(t, err, ErrInvalidBool)
	assert.Equal(t, int64(4), e.Offset)
	cp := make([]bool, 6)
	require.NoError(t, Copy(cp, r, 0, binary.LittleEndian))
	assert.Equal(t, []bool{false, true, true, false, true, true}, cp)
}

func TestCopySwapsAndUnaligned(t *testing.T) {
	p := filepath.Join(t.TempDir(), "be")
	raw := []byte{0xff, 0x3f, 0xf0, 0, 0, 0, 0, 0, 0, 0x40, 0, 0, 0, 0, 0, 0, 0}
	require.NoError(t, os.WriteFile(p, raw, 0o644))
	f, err := Open(p)
	require.NoError(t, err)
	defer f.Close()
	r, err := f.MapAll()
	require.NoError(t, err)
	xs := make([]float64, 2)
	require.NoError(t, Copy(xs, r, 1, binary.BigEndian)) // offset 1: unaligned
	assert.Equal(t, []float64{1, 2}, xs)
	le := make([]uint16, 1)
	require.NoError(t, Copy(le, r, 0, binary.LittleEndian))
	assert.Equal(t, uint16(0x3fff), le[0])
	big := make([]layout.Uint128, 1)
	require.NoError(t, Copy(big, r, 1, binary.BigEndian))
	assert.Equal(t, layout.Uint128{Hi: 0x3ff0000000000000, Lo: 0x4000000000000000}, big[0])
	assert.ErrorIs(t, Copy(make([]float64, 3), r, 0, binary.LittleEndian), ErrOutOfRange)
}

func TestReadWriteMappingReachesFile(t *testing.T) {
	p := filepath.Join(t.TempDir(), "rw.bin")
	f, err := Create(p)
	require.NoError(t, err)
	require.NoError(t, f.Grow(8*1024))
	r, err := f.MapAll()
	require.NoError(t, err)
	xs, err := View[float64](r, 0, 1024, binary.LittleEndian)
	require.NoError(t, err)
	for i := range xs {
		xs[i] = float64(i) * 0.5
	}
	require.NoError(t, r.SyncRange(8*10, 16))
	require.NoError(t, f.Sync())
	require.NoError(t, f.Close())

	got, err := os.ReadFile(p)
	require.NoError(t, err)
	require.Len(t, got, 8*1024)
	assert.Equal(t, math.Float64bits(511.5), binary.LittleEndian.Uint64(got[8*1023:]))
	assert.Equal(t, math.Float64bits(0.5), binary.LittleEndian.Uint64(got[8:]))

	// Reopen read-write, edit one element, close: the edit is on disk and
	// nothing else changed.
	f, err = OpenFile(p, ReadWrite, nil)
	require.NoError(t, err)
	r, err = f.Map(8*7, 8)
	require.NoError(t, err)
	one, err := View[float64](r, 0, 1, binary.LittleEndian)
	require.NoError(t, err)
	one[0] = -42
	require.NoError(t, f.Close())
	after, err := os.ReadFile(p)
	require.NoError(t, err)
	assert.Equal(t, math.Float64bits(-42), binary.LittleEndian.Uint64(after[56:]))
	after[56], after[57], after[58], after[59], after[60], after[61], after[62], after[63] = got[56], got[57], got[58], got[59], got[60], got[61], got[62], got[63]
	assert.Equal(t, got, after)
}

func TestClosedFileIsAnError(t *testing.T) {
	p, _ := writeFile(t, 100)
	f, err := OpenFile(p, ReadWrite, nil)
	require.NoError(t, err)
	r, err := f.MapAll()
	require.NoError(t, err)
	require.NoError(t, f.Close())
	assert.ErrorIs(t, f.Close(), ErrClosed)
	_, err = f.Map(0, 1)
	assert.ErrorIs(t, err, ErrClosed)
	_, err = f.Size()
	assert.ErrorIs(t, err, ErrClosed)
	assert.ErrorIs(t, f.Sync(), ErrClosed)
	assert.ErrorIs(t, f.Grow(1000), ErrClosed)
	_, err = f.WriteAt([]byte{1}, 0)
	assert.ErrorIs(t, err, ErrClosed)
	_, err = r.ReadAt(make([]byte, 1), 0)
	assert.ErrorIs(t, err, ErrClosed)
	_, err = View[uint8](r, 0, 1, binary.LittleEndian)
	assert.ErrorIs(t, err, ErrClosed)
	assert.ErrorIs(t, r.Sync(), ErrClosed)
	assert.Nil(t, r.Bytes())
}

func TestReadOnlyRefusesWrites(t *testing.T) {
	p, want := writeFile(t, 8192)
	f, err := Open(p)
	require.NoError(t, err)
	defer f.Close()
	r, err := f.MapAll()
	require.NoError(t, err)
	_, err = r.WriteAt([]byte{1, 2}, 0)
	assert.ErrorIs(t, err, ErrNotWritable)
	assert.ErrorIs(t, f.Grow(10000), ErrNotWritable)
	assert.ErrorIs(t, f.Truncate(10), ErrNotWritable)
	_, err = f.WriteAt([]byte{1}, 0)
	assert.ErrorIs(t, err, ErrNotWritable)
	// A direct write to read-only pages faults; under Guard it is an error.
	err = r.Guard(func() { r.Bytes()[100] = 9 })
	require.ErrorIs(t, err, ErrFault)
	var e *Error
	require.ErrorAs(t, err, &e)
	assert.Equal(t, int64(100)/int64(os.Getpagesize())*int64(os.Getpagesize()), e.Offset/int64(os.Getpagesize())*int64(os.Getpagesize()))
	assert.Equal(t, want[100], r.Bytes()[100])
	_, err = OpenFile(p, ReadOnly, &Options{Create: true})
	assert.Error(t, err)
}

func TestTruncatedUnderMappingIsAnError(t *testing.T) {
	ps := os.Getpagesize()
	p, _ := writeFile(t, 4*ps)
	f, err := Open(p)
	require.NoError(t, err)
	defer f.Close()
	r, err := f.MapAll()
	require.NoError(t, err)
	// Another handle (as another process would) cuts the file to one page.
	require.NoError(t, os.Truncate(p, int64(ps)))
	buf := make([]byte, 2*ps)
	_, err = r.ReadAt(buf, 0)
	require.ErrorIs(t, err, ErrFault)
	var e *Error
	require.ErrorAs(t, err, &e)
	assert.True(t, e.Offset >= int64(ps) && e.Offset < int64(2*ps), "the fault is in the first lost page, not at %d", e.Offset)
	xs := make([]uint64, 4)
	assert.ErrorIs(t, Copy(xs, r, int64(3*ps), binary.LittleEndian), ErrFault)
	// The surviving page still reads.
	_, err = r.ReadAt(buf[:ps], 0)
	assert.NoError(t, err)
}

func TestGuardRepanicsOtherFaults(t *testing.T) {
	p, _ := writeFile(t, 100)
	f, err := Open(p)
	require.NoError(t, err)
	defer f.Close()
	r, err := f.MapAll()
	require.NoError(t, err)
	assert.PanicsWithValue(t, "not a fault", func() { _ = r.Guard(func() { panic("not a fault") }) })
	// A real fault at an address outside the mapping is not ours either.
	var nowhere *int64
	assert.Panics(t, func() { _ = r.Guard(func() { _ = *nowhere }) })
	// And the guard still works afterwards.
	assert.NoError(t, r.Guard(func() { _ = r.Bytes()[0] }))
}

func TestGrowKeepsViewsAndTruncateRefusesLiveRegions(t *testing.T) {
	p := filepath.Join(t.TempDir(), "g")
	f, err := Create(p)
	require.NoError(t, err)
	defer f.Close()
	require.NoError(t, f.Grow(4096))
	r1, err := f.MapAll()
	require.NoError(t, err)
	v1, err := View[uint32](r1, 0, 1024, binary.LittleEndian)
	require.NoError(t, err)
	v1[3] = 77
	require.NoError(t, f.Grow(3*4096))
	require.NoError(t, f.Grow(100)) // smaller: no-op
	size, err := f.Size()
	require.NoError(t, err)
	assert.Equal(t, int64(3*4096), size)
	r2, err := f.MapAll()
	require.NoError(t, err)
	v2, err := View[uint32](r2, 0, 3*1024, binary.LittleEndian)
	require.NoError(t, err)
	assert.Equal(t, uint32(77), v2[3], "both mappings share the page cache")
	v2[3000] = 5
	assert.Equal(t, uint32(77), v1[3], "earlier views stay valid after growth")
	assert.ErrorIs(t, f.Truncate(4096), ErrMapped)
	require.NoError(t, r2.Unmap())
	require.NoError(t, f.Truncate(4096))
	require.NoError(t, f.Truncate(8192)) // growing through Truncate
	size, _ = f.Size()
	assert.Equal(t, int64(8192), size)
}

func TestAdviceAndPopulate(t *testing.T) {
	p, want := writeFile(t, 1<<20)
	f, err := OpenFile(p, ReadOnly, &Options{Advice: AdviceSequential, Populate: true})
	require.NoError(t, err)
	defer f.Close()
	r, err := f.MapAll()
	require.NoError(t, err)
	assert.Equal(t, want, r.Bytes())
	for _, a := range []Advice{AdviceNormal, AdviceSequential, AdviceRandom, AdviceWillNeed} {
		assert.NoError(t, r.Advise(a), "advice %d", a)
	}
	if err := r.Advise(AdviceHugePage); err != nil {
		// Huge pages on file mappings depend on the kernel's settings.
		t.Logf("huge-page advice: %v", err)
	}
	assert.NoError(t, r.Populate())
	assert.Error(t, r.Advise(Advice(99)))
	require.NoError(t, f.DropCache())
	assert.Equal(t, want[12345], r.Bytes()[12345])
}

// The lock tests run a second process: this test binary, re-executed with
// MMAPFILE_LOCK_CHILD set, which tries to open the file and reports.
func TestMain(m *testing.M) {
	if p := os.Getenv("MMAPFILE_LOCK_CHILD"); p != "" {
		os.Exit(lockChild(p, os.Getenv("MMAPFILE_LOCK_MODE")))
	}
	os.Exit(m.Run())
}

func lockChild(p, mode string) int {
	var f *File
	var err error
	switch mode {
	case "rw":
		f, err = OpenFile(p, ReadWrite, nil)
	case "rw-wait":
		f, err = OpenFile(p, ReadWrite, &Options{Wait: true})
	case "ro-shared":
		f, err = OpenFile(p, ReadOnly, &Options{Lock: LockShared})
	default:
		f, err = Open(p)
	}
	if errors.Is(err, ErrLocked) {
		fmt.Println("locked")
		return 3
	}
	if err != nil {
		fmt.Println(err)
		return 1
	}
	fmt.Println("opened")
	f.Close()
	return 0
}

func runChild(t *testing.T, p, mode string) (string, int) {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), "MMAPFILE_LOCK_CHILD="+p, "MMAPFILE_LOCK_MODE="+mode)
	out, err := cmd.Output()
	code := 0
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		code = ee.ExitCode()
	} else {
		require.NoError(t, err)
	}
	return string(out), code
}

func TestLockAcrossProcesses(t *testing.T) {
	p, _ := writeFile(t, 10)

	w, err := OpenFile(p, ReadWrite, nil)
	require.NoError(t, err)
	out, code := runChild(t, p, "rw")
	assert.Equal(t, 3, code, out)
	out, code = runChild(t, p, "ro-shared")
	assert.Equal(t, 3, code, "a shared lock waits for the writer: %s", out)
	out, code = runChild(t, p, "ro")
	assert.Equal(t, 0, code, "plain read-only opens take no lock: %s", out)
	// In the same process a second writer is refused too.
	_, err = OpenFile(p, ReadWrite, nil)
	assert.ErrorIs(t, err, ErrLocked)

	// A waiting writer gets the file once the first one closes it.
	done := make(chan int)
	go func() {
		_, code := runChild(t, p, "rw-wait")
		done <- code
	}()
	time.Sleep(300 * time.Millisecond)
	select {
	case <-done:
		t.Fatal("the waiting writer did not wait")
	default:
	}
	require.NoError(t, w.Close())
	assert.Equal(t, 0, <-done)

	// Readers with shared locks block writers but not each other.
	r, err := OpenFile(p, ReadOnly, &Options{Lock: LockShared})
	require.NoError(t, err)
	_, code = runChild(t, p, "ro-shared")
	assert.Equal(t, 0, code)
	_, code = runChild(t, p, "rw")
	assert.Equal(t, 3, code)
	require.NoError(t, r.Close())
	_, code = runChild(t, p, "rw")
	assert.Equal(t, 0, code)
}

func TestConcurrentReadersWhileAppending(t *testing.T) {
	p := filepath.Join(t.TempDir(), "c")
	w, err := Create(p)
	require.NoError(t, err)
	defer w.Close()
	const chunk = 1 << 16
	require.NoError(t, w.Grow(chunk))
	wr, err := w.MapAll()
	require.NoError(t, err)
	v, err := View[uint64](wr, 0, chunk/8, binary.LittleEndian)
	require.NoError(t, err)
	for i := range v {
		v[i] = uint64(i)
	}
	require.NoError(t, w.Sync())

	ro, err := Open(p)
	require.NoError(t, err)
	defer ro.Close()
	rr, err := ro.Map(0, chunk)
	require.NoError(t, err)
	errc := make(chan error, 8)
	for g := 0; g < 8; g++ {
		go func() {
			xs, err := View[uint64](rr, 0, chunk/8, binary.LittleEndian)
			if err != nil {
				errc <- err
				return
			}
			for round := 0; round < 20; round++ {
				for i, x := range xs {
					if x != uint64(i) {
						errc <- fmt.Errorf("element %d is %d", i, x)
						return
					}
				}
			}
			errc <- nil
		}()
	}
	// Meanwhile the writer appends ten more chunks with pwrite.
	buf := make([]byte, chunk)
	for k := 1; k <= 10; k++ {
		_, err := w.WriteAt(buf, int64(k*chunk))
		require.NoError(t, err)
	}
	for g := 0; g < 8; g++ {
		require.NoError(t, <-errc)
	}
	size, _ := ro.Size()
	assert.Equal(t, int64(11*chunk), size)
}

func ExampleView() {
	dir, _ := os.MkdirTemp("", "mmapfile-example")
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "x.f64")

	// Write four float64s through a read-write mapping.
	f, _ := Create(path)
	_ = f.Grow(4 * 8)
	r, _ := f.MapAll()
	xs, _ := View[float64](r, 0, 4, binary.LittleEndian)
	copy(xs, []float64{1.5, 2.5, 3.5, 4.5})
	_ = f.Close() // syncs; xs is invalid from here on

	// Map it read-only and sum a view of the last three.
	f, _ = Open(path)
	defer f.Close()
	r, _ = f.Map(8, 24)
	ys, _ := View[float64](r, 0, 3, binary.LittleEndian)
	sum := 0.0
	for _, y := range ys {
		sum += y
	}
	fmt.Println(len(ys), sum)
	// Output: 3 10.5
}

func TestAdviseRange(t *testing.T) {
	ps := os.Getpagesize()
	p, want := writeFile(t, 8*ps)
	f, err := Open(p)
	require.NoError(t, err)
	defer f.Close()
	r, err := f.Map(100, int64(7*ps))
	require.NoError(t, err)
	require.NoError(t, r.AdviseRange(int64(ps)+5, int64(2*ps), AdviceDontNeed))
	require.NoError(t, r.AdviseRange(0, 0, AdviceSequential))
	assert.ErrorIs(t, r.AdviseRange(int64(7*ps), 1, AdviceDontNeed), ErrOutOfRange)
	// Dropped pages of a file mapping read back from the file.
	assert.Equal(t, want[100+ps+5:100+3*ps], r.Bytes()[ps+5:3*ps])
}

// OpenMapped opens and maps the whole file; on error nothing stays open.
func TestOpenMapped(t *testing.T) {
	p, want := writeFile(t, 10000)
	f, r, err := OpenMapped(p, ReadOnly, nil)
	require.NoError(t, err)
	assert.Equal(t, want, r.Bytes())
	require.NoError(t, f.Close())
	_, _, err = OpenMapped(p+".missing", ReadOnly, nil)
	assert.ErrorIs(t, err, os.ErrNotExist)
	_, _, err = OpenMapped(filepath.Dir(p), ReadOnly, nil)
	assert.ErrorIs(t, err, ErrNotRegular)
}
