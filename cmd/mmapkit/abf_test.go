package main

import (
	"bufio"
	"encoding/binary"
	"fmt"
	"io"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mmapkit/mmapkit/abf"
	"github.com/mmapkit/mmapkit/layout"
	"github.com/mmapkit/mmapkit/mmapfile"
)

// ABF files of more records than Linux lets a process have mappings
// (vm.max_map_count, 65530 by default) convert, list and print.
func TestABFManyRecords(t *testing.T) {
	if testing.Short() {
		t.Skip("writes and prints 70,000 records")
	}
	const n = 70000
	dir := t.TempDir()
	// n Futhark binary i32 scalars, value i = i*7 - 1000.
	var in []byte
	var want strings.Builder
	for i := range n {
		v := int32(i*7 - 1000)
		in = append(in, 'b', 2, 0, ' ', 'i', '3', '2')
		in = binary.LittleEndian.AppendUint32(in, uint32(v))
		fmt.Fprintf(&want, "-- %d\n%di32\n", i, v) // each record named: there are several
	}
	m := filepath.Join(dir, "m.in")
	require.NoError(t, os.WriteFile(m, in, 0o644))
	x := filepath.Join(dir, "x.abf")
	mustMk(t, "convert", m, x)
	assert.Equal(t, want.String(), mustMk(t, "cat", x))
	ls := mustMk(t, "ls", x)
	assert.Equal(t, n+2, strings.Count(ls, "\n"), "a title, a header and a line per record")
	assert.Contains(t, ls, fmt.Sprintf("%d  i32   scalar", n-1))
}

// A file cut short while cat prints it: the error names the file, the
// record and the first byte that is gone.
func TestCatABFCutShortWhilePrinting(t *testing.T) {
	p := filepath.Join(t.TempDir(), "x.abf")
	f, err := abf.OpenFile(p, mmapfile.ReadWrite, &abf.Options{Mode: "w"})
	require.NoError(t, err)
	const side = 2048 // 32 MiB, printed a band of rows at a time, transposed
	// Written a piece at a time: a child's peak RSS starts from this
	// process's (TestCatStreamsInBoundedMemory measures it).
	require.NoError(t, f.WriteStream("x", layout.F64, []int64{side, side}, func(w io.Writer) error {
		piece := make([]byte, 64<<10)
		for i := 0; i < side*side; i += len(piece) / 8 {
			for j := 0; j < len(piece)/8; j++ {
				binary.LittleEndian.PutUint64(piece[8*j:], math.Float64bits(float64((i+j)%1000)))
			}
			if _, err := w.Write(piece); err != nil {
				return err
			}
		}
		return nil
	}))
	rec, ok := f.Lookup("x")
	require.True(t, ok)
	require.NoError(t, f.Close())

	cmd := exec.Command(mkBin, "cat", p)
	out, err := cmd.StdoutPipe()
	require.NoError(t, err)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	require.NoError(t, cmd.Start())
	// Once printing has begun, cut the file: the bands read afterwards
	// find it shorter.
	_, err = io.ReadFull(bufio.NewReader(out), make([]byte, 64<<10))
	require.NoError(t, err)
	const cut = 1 << 20
	require.NoError(t, os.Truncate(p, cut))
	_, err = io.Copy(io.Discard, out)
	require.NoError(t, err)
	require.Error(t, cmd.Wait())
	assert.Equal(t, 1, cmd.ProcessState.ExitCode())
	// The cause is always shown: the truncation, and the fault that
	// found it where a mapped read did.
	assert.Regexp(t, "^"+regexp.QuoteMeta(fmt.Sprintf("mmapkit: %s: offset %d: record \"x\": the file was cut short while open: the payload [%d, %d) is no longer all there; it now ends at offset %d: ",
		p, cut, rec.Offset, rec.Offset+rec.Size, cut))+`(payload cut short: )?file is truncated: unexpected EOF(: access at offset \d+: (the file now ends at \d+: )?memory fault in mapping \(file truncated or unwritable\?\))?\n$`, stderr.String())
}

// An ABF matrix cut at any byte: ls and cat fail with a message that
// names the file and the offset.
func TestABFTruncatedAtEveryByte(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "m.abf")
	f, err := abf.OpenFile(p, mmapfile.ReadWrite, &abf.Options{Mode: "w"})
	require.NoError(t, err)
	require.NoError(t, abf.Write(f, "m", []int64{3, 2}, []float64{1, 2, 3, 4, 5, 6}))
	first, ok := f.Lookup("m")
	require.True(t, ok)
	require.NoError(t, f.WriteBits("b", abf.BitArray{Dims: []int64{2, 2}, Chunks: []uint64{0b1001}}))
	require.NoError(t, f.Close())
	data, err := os.ReadFile(p)
	require.NoError(t, err)
	cutPath := filepath.Join(dir, "cut.abf")
	msg := regexp.MustCompile(`^mmapkit: ` + regexp.QuoteMeta(cutPath) + `: offset \d+: \S`)
	for n := 1; n < len(data); n++ {
		require.NoError(t, os.WriteFile(cutPath, data[:n], 0o644))
		for _, cmd := range []string{"ls", "cat"} {
			r := mk(t, cmd, cutPath)
			if int64(n) == first.End { // a file of one record
				require.Equal(t, 0, r.code, "%s of the first %d bytes: %s", cmd, n, r.stderr)
				continue
			}
			require.Equal(t, 1, r.code, "%s of the first %d bytes: %s", cmd, n, r.stderr)
			require.Regexp(t, msg, r.stderr, "%s of the first %d bytes", cmd, n)
		}
	}
}
