//go:build linux

package reliability

import (
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mmapkit/mmapkit/abf"
	"github.com/mmapkit/mmapkit/mmapfile"
)

// abfKey names record i of round r; abfRecordSize gives its element count,
// varied so that payloads span from one element to many pages.
func abfKey(round, i int) string { return fmt.Sprintf("r%d_%d", round, i) }

func abfRecordSize(round, i int) int {
	if i%4 == 3 {
		return 1<<17 + round // 1 MiB of float64s, long enough to be cut in the middle
	}
	return 1 + (round*7919+i*104729)%12000
}

// abfValues are record (round, i)'s values: never zero, so that a payload
// that was allocated but not written cannot pass for one.
func abfValues[T int32 | int16 | float64](round, i int) []T {
	v := make([]T, abfRecordSize(round, i))
	for j := range v {
		v[j] = T(round*131+i*17+j%1000) + 1
	}
	return v
}

// abfBitCount is the length of record (round, i)'s BitArray when it is one:
// up to 4096 words.
func abfBitCount(round, i int) int { return 64*(abfRecordSize(round, i)%4096) + i%64 }

// abfBits is record (round, i)'s BitArray when it is one.
func abfBits(round, i int) []bool {
	v := make([]bool, abfBitCount(round, i))
	for j := range v {
		v[j] = (j*7+round+i)%3 == 0
	}
	return v
}

// abfString is record (round, i)'s String when it is one (Format C only:
// Format A cannot hold Strings).
func abfString(round, i int) string {
	return fmt.Sprintf("%d/%d:", round, i) + strings.Repeat("αβγ", abfRecordSize(round, i)/3+1)
}

// abfKind picks record (round, i)'s kind: float64, int32 or int16 arrays,
// a BitArray every fifth record, a String (Format C) every fifth other.
func abfKind(version string, i int) string {
	switch {
	case i%5 == 4:
		return "bits"
	case i%5 == 2 && version == abf.FormatC.String():
		return "string"
	}
	return []string{"f64", "i32", "i16"}[i%3]
}

// writeABFRecord appends record (round, i).
func writeABFRecord(f *abf.File, round, i int) error {
	key, n := abfKey(round, i), int64(abfRecordSize(round, i))
	switch abfKind(f.Version(), i) {
	case "bits":
		b, err := abf.PackBits([]int64{int64(abfBitCount(round, i))}, abfBits(round, i))
		if err != nil {
			return err
		}
		return f.WriteBits(key, b)
	case "string":
		return f.WriteString(key, abfString(round, i))
	case "f64":
		return abf.Write(f, key, []int64{n}, abfValues[float64](round, i))
	case "i32":
		return abf.Write(f, key, []int64{n}, abfValues[int32](round, i))
	default:
		return abf.Write(f, key, []int64{n}, abfValues[int16](round, i))
	}
}

// checkABFRecord verifies record (round, i) through a copy and a view.
func checkABFRecord(t *testing.T, f *abf.File, round, i int) {
	t.Helper()
	key := abfKey(round, i)
	switch abfKind(f.Version(), i) {
	case "bits":
		b, err := f.ReadBits(key)
		require.NoError(t, err, key)
		require.Equal(t, abfBits(round, i), b.Bools(), key)
		v, err := f.ViewBits(key)
		require.NoError(t, err, key)
		require.True(t, slices.Equal(b.Chunks, v.Chunks), "view of %s", key)
	case "string":
		s, err := f.ReadString(key)
		require.NoError(t, err, key)
		require.Equal(t, abfString(round, i), s, key)
	case "f64":
		checkABFValues(t, f, key, abfValues[float64](round, i))
	case "i32":
		checkABFValues(t, f, key, abfValues[int32](round, i))
	default:
		checkABFValues(t, f, key, abfValues[int16](round, i))
	}
}

func checkABFValues[T int32 | int16 | float64](t *testing.T, f *abf.File, key string, want []T) {
	t.Helper()
	got, err := abf.Read[T](f, key)
	require.NoError(t, err, key)
	require.Equal(t, want, got, key)
	view, err := abf.View[T](f, key)
	require.NoError(t, err, key)
	require.True(t, slices.Equal(want, view), "view of %s", key)
}

func init() {
	// "abf-append" opens the file with mode "a" and Repair (which cuts a
	// torn tail left by the previous kill), appends records (round arg, 0), (arg, 1),
	// … and prints each key after the record was written (and, in even
	// rounds, synced).
	children["abf-append"] = func(path string, round int64) error {
		return abfAppendChild(path, int(round), abf.FormatC)
	}
	children["abf-append-A"] = func(path string, round int64) error {
		return abfAppendChild(path, int(round), abf.FormatA)
	}
}

func abfAppendChild(path string, round int, format abf.Format) error {
	f, err := abf.OpenFile(path, mmapfile.ReadWrite, &abf.Options{Mode: "a", Repair: true, Format: format})
	if err != nil {
		return err
	}
	for i := 0; i < 10000; i++ {
		if err := writeABFRecord(f, round, i); err != nil {
			return err
		}
		if syncs(round) {
			if err := f.Sync(); err != nil {
				return err
			}
		}
		fmt.Println(abfKey(round, i))
	}
	return f.Close()
}

// A process appending to an ABF file is killed at random moments. After each
// kill: every record it reported is in the file with its values; at most one
// more record (written, not yet reported) is there, whole; a read-only open
// either sees exactly those records or reports the torn tail after them, and
// never shows a partial record; the next writer's "a" open cuts the tail.
func TestCrashABFAppend(t *testing.T) {
	for _, c := range []struct {
		name   string
		role   string
		format abf.Format
	}{{"format C", "abf-append", abf.FormatC}, {"format A", "abf-append-A", abf.FormatA}} {
		t.Run(c.name, func(t *testing.T) {
			rng := newRand(t)
			p := filepath.Join(t.TempDir(), "crash.abf")
			known := []string{} // keys in the file, in order
			type rec struct{ round, i int }
			where := map[string]rec{}
			var torn, unreported, reportedTotal int
			for round := range crashRounds() {
				n, d := killPlan(rng)
				lines := startChild(t, c.role, p, int64(round)).killAfter(t, n, d)
				for i, key := range lines {
					require.Equal(t, abfKey(round, i), key, "child output")
				}
				reportedTotal += len(lines)
				if _, err := os.Stat(p); errors.Is(err, os.ErrNotExist) {
					require.Empty(t, lines)
					require.Empty(t, known)
					continue
				}

				s, err := abf.Open(p, &abf.Options{Salvage: true})
				require.NoError(t, err, "round %d: salvaging open", round)
				recs := s.Entries()
				keys := make([]string, len(recs))
				for i, r := range recs {
					keys[i] = r.Name
				}
				require.GreaterOrEqual(t, len(keys), len(known)+len(lines), "round %d: reported records are missing", round)
				require.LessOrEqual(t, len(keys), len(known)+len(lines)+1, "round %d: more records than were written", round)
				require.Equal(t, known, keys[:len(known)], "round %d: earlier records", round)
				for i := len(known); i < len(keys); i++ {
					require.Equal(t, abfKey(round, i-len(known)), keys[i], "round %d", round)
					where[keys[i]] = rec{round, i - len(known)}
				}
				if len(keys) > len(known)+len(lines) {
					unreported++
				}
				// The new records are checked now, all of them at the end:
				// the key list shows that nothing before them moved.
				for _, k := range keys[len(known):] {
					checkABFRecord(t, s, where[k].round, where[k].i)
				}
				known = keys
				size, err := os.Stat(p)
				require.NoError(t, err)
				end := int64(0)
				if len(recs) > 0 {
					end = recs[len(recs)-1].End
				}
				damage := s.Damage()
				trailing := s.TrailingBytes()
				require.NoError(t, s.Close())

				// A plain read-only open never shows a partial record: it
				// sees exactly these records, or reports the tail.
				f, err := abf.Open(p, nil)
				if damage == nil && trailing == 0 {
					require.NoError(t, err, "round %d", round)
					require.Len(t, f.Entries(), len(known))
					require.NoError(t, f.Close())
					if c.format == abf.FormatC {
						require.Equal(t, end, size.Size(), "round %d: bytes after the last record", round)
					}
					continue
				}
				torn++
				if damage != nil {
					require.Error(t, err, "round %d: a torn tail must be reported", round)
					var fe *abf.FormatError
					require.ErrorAs(t, err, &fe)
					assert.GreaterOrEqual(t, fe.Offset, end, "round %d: the error is in the tail", round)
				} else {
					// Format A: a record written but not yet counted is
					// invisible; its bytes are trailing.
					require.NoError(t, err)
					require.Len(t, f.Entries(), len(known))
					require.NoError(t, f.Close())
					require.True(t, abfWriterCutsTrailing(t, p, end), "round %d: an appending open keeps %d uncounted bytes", round, trailing)
				}
			}
			// A last writer repairs the tail; then a plain open sees all.
			w, err := abf.OpenFile(p, mmapfile.ReadWrite, &abf.Options{Mode: "a", Repair: true, Format: c.format})
			require.NoError(t, err)
			require.NoError(t, w.Close())
			f, err := abf.Open(p, nil)
			require.NoError(t, err)
			defer f.Close()
			require.Len(t, f.Entries(), len(known))
			for _, k := range known {
				checkABFRecord(t, f, where[k].round, where[k].i)
			}
			t.Logf("%d rounds: %d records reported, %d in the file, %d rounds left a torn or uncounted tail, %d rounds left a whole unreported record",
				crashRounds(), reportedTotal, len(known), torn, unreported)
		})
	}
}

// abfWriterCutsTrailing reports whether a repairing "a" open of the Format
// A file at path cuts the bytes after its last counted record (which ends
// at end), as a writer must be able to repair what a crash left.
func abfWriterCutsTrailing(t *testing.T, path string, end int64) bool {
	t.Helper()
	w, err := abf.OpenFile(path, mmapfile.ReadWrite, &abf.Options{Mode: "a", Repair: true})
	require.NoError(t, err)
	require.NoError(t, w.Close())
	fi, err := os.Stat(path)
	require.NoError(t, err)
	return fi.Size() == end
}

// A Format A writer killed after writing a record but before updating the
// header's count leaves bytes after the counted records. Readers ignore
// them, and a plain writer refuses to overwrite them (abf.md §8.2); a
// writer opening the file with Repair cuts them, says so in Damage, and
// appends after the last counted record.
func TestABFFormatAUncountedTailCutByWriter(t *testing.T) {
	p := filepath.Join(t.TempDir(), "a.abf")
	w, err := abf.OpenFile(p, mmapfile.ReadWrite, &abf.Options{Mode: "w", Format: abf.FormatA})
	require.NoError(t, err)
	require.NoError(t, abf.Write(w, "x", []int64{2}, []float64{1, 2}))
	require.NoError(t, abf.Write(w, "y", []int64{3}, []int32{4, 5, 6}))
	require.NoError(t, w.Close())
	// The state a kill between the payload write and the count update
	// leaves: record "y" complete, the count still 1.
	b, err := os.ReadFile(p)
	require.NoError(t, err)
	b[14] = 1
	require.NoError(t, os.WriteFile(p, b, 0o644))

	r, err := abf.Open(p, nil)
	require.NoError(t, err)
	require.Len(t, r.Entries(), 1)
	end := r.Entries()[0].End
	require.NoError(t, r.Close())

	w, err = abf.OpenFile(p, mmapfile.ReadWrite, &abf.Options{Mode: "a"})
	require.NoError(t, err)
	require.ErrorIs(t, abf.Write(w, "z", []int64{1}, []int16{7}), mmapfile.ErrNotWritable)
	require.NoError(t, w.Close())
	w, err = abf.OpenFile(p, mmapfile.ReadWrite, &abf.Options{Mode: "a", Repair: true})
	require.NoError(t, err)
	var fe *abf.FormatError
	require.ErrorAs(t, w.Damage(), &fe, "the writer says what it cut")
	assert.Equal(t, end, fe.Offset)
	require.NoError(t, abf.Write(w, "z", []int64{1}, []int16{7}))
	require.NoError(t, w.Close())
	r, err = abf.Open(p, nil)
	require.NoError(t, err)
	defer r.Close()
	require.Len(t, r.Entries(), 2)
	assert.Equal(t, end, r.Entries()[1].Start, "the uncounted record was cut")
	z, err := abf.Read[int16](r, "z")
	require.NoError(t, err)
	assert.Equal(t, []int16{7}, z)
}

// A file cut anywhere inside its last record — what a crash mid-append
// leaves — is refused by a plain open with an error in that record, and
// by a writing open, which changes nothing (a corrupted length looks the
// same); a writing open with Repair cuts the record away (and fixes
// Format A's count), and appending the same record again gives the
// original file back byte for byte.
func TestTornTailWriterRepair(t *testing.T) {
	for _, format := range []abf.Format{abf.FormatC, abf.FormatA} {
		t.Run("format "+format.String(), func(t *testing.T) {
			dir := t.TempDir()
			p := filepath.Join(dir, "x.abf")
			appendLast := func(f *abf.File) error {
				return abf.Write(f, "c", []int64{2, 2}, []float64{-1, 0.5, 1e300, 7})
			}
			w, err := abf.OpenFile(p, mmapfile.ReadWrite, &abf.Options{Mode: "w", Format: format})
			require.NoError(t, err)
			require.NoError(t, abf.Write(w, "a", []int64{3}, []float64{1, 2, 3}))
			require.NoError(t, abf.Write(w, "b", []int64{5}, []int32{1, 2, 3, 4, 5}))
			require.NoError(t, appendLast(w))
			require.NoError(t, w.Close())
			whole, err := os.ReadFile(p)
			require.NoError(t, err)
			r, err := abf.Open(p, nil)
			require.NoError(t, err)
			last, _ := r.Lookup("c")
			require.NoError(t, r.Close())

			repaired := append([]byte{}, whole[:last.Start]...)
			if format == abf.FormatA {
				binary.LittleEndian.PutUint64(repaired[14:], 2) // the count
			}
			for size := last.Start + 1; size < last.End; size++ {
				torn := whole[:size]
				require.NoError(t, os.WriteFile(p, torn, 0o644))
				_, err := abf.Open(p, nil)
				var fe *abf.FormatError
				require.ErrorAs(t, err, &fe, "cut at %d", size)
				require.GreaterOrEqual(t, fe.Offset, last.Start, "cut at %d", size)
				require.Less(t, fe.Offset, last.End, "cut at %d", size)

				// A writer refuses it, says what a repair would cut and
				// changes nothing; asked to repair, it cuts that and says
				// so, as design.md asks.
				mode := []string{"a", "r+"}[size%2]
				_, err = abf.OpenFile(p, mmapfile.ReadWrite, &abf.Options{Mode: mode})
				require.ErrorIs(t, err, mmapfile.ErrNeedsRepair, "cut at %d", size)
				require.Contains(t, err.Error(), fmt.Sprintf("would cut its last %d bytes, from offset %d", size-last.Start, last.Start))
				requireUnchanged(t, p, snapshot{exists: true, data: torn})
				f, err := abf.OpenFile(p, mmapfile.ReadWrite, &abf.Options{Mode: "a", Repair: true})
				require.NoError(t, err, "cut at %d", size)
				require.ErrorAs(t, f.Damage(), &fe, "cut at %d", size)
				require.Equal(t, last.Start, fe.Offset, "cut at %d", size)
				require.NoError(t, f.Close())
				requireUnchanged(t, p, snapshot{exists: true, data: repaired})
				require.NoError(t, os.WriteFile(p, torn, 0o644))

				f, err = abf.OpenFile(p, mmapfile.ReadWrite, &abf.Options{Mode: mode, Repair: true})
				require.NoError(t, err, "cut at %d", size)
				require.Error(t, f.Damage(), "cut at %d", size)
				require.Len(t, f.Entries(), 2)
				require.NoError(t, appendLast(f))
				require.NoError(t, f.Close())
				requireUnchanged(t, p, snapshot{exists: true, data: whole})
			}
		})
	}
}
