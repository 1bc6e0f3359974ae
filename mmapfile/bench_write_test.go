package mmapfile

import (
	"encoding/binary"
	"os"
	"path/filepath"
	"testing"
)

// Write-side figures, each beside its ceiling on the same file system (the
// test's temporary directory; TMPDIR moves it):
//
//   - BenchmarkCreateFillView creates a file and fills it through a
//     writable mapping; BenchmarkWriteSyscall writes the same bytes with
//     write(2). "synced" includes the final fsync (Close syncs), "cached"
//     stops the clock before it (and syncs all the same, so that every
//     round starts from the same state of the file system).
//   - BenchmarkEditSync changes one float64 (a different page each time)
//     and makes it durable; BenchmarkPwriteFdatasync is pwrite of the same
//     8 bytes plus fdatasync.
//
//	go test ./mmapfile -run '^$' -bench 'CreateFill|WriteSyscall|EditSync|PwriteFdatasync' -count 5

const fillSize = 64 << 20

// fillSource is 1 MiB of non-zero bytes, copied fillSize/1MiB times.
func fillSource() []byte {
	b := make([]byte, 1<<20)
	for i := range b {
		b[i] = byte(i*7 + 3)
	}
	return b
}

func BenchmarkWriteSyscall(b *testing.B) {
	for _, synced := range []bool{true, false} {
		b.Run(syncName(synced), func(b *testing.B) {
			src, p := fillSource(), filepath.Join(b.TempDir(), "w")
			b.SetBytes(fillSize)
			for b.Loop() {
				f, err := os.OpenFile(p, os.O_RDWR|os.O_CREATE|os.O_TRUNC, 0o644)
				if err != nil {
					b.Fatal(err)
				}
				for off := 0; off < fillSize; off += len(src) {
					if _, err := f.Write(src); err != nil {
						b.Fatal(err)
					}
				}
				if !synced {
					b.StopTimer()
				}
				// Synced in both cases, as Close syncs the mapped file:
				// the freed blocks of the last round cost the next the
				// same.
				if err := f.Sync(); err != nil {
					b.Fatal(err)
				}
				b.StopTimer()
				f.Close()
				os.Remove(p)
				b.StartTimer()
			}
		})
	}
}

func BenchmarkCreateFillView(b *testing.B) {
	for _, how := range []string{"plain", "PopulateWrite"} {
		for _, synced := range []bool{true, false} {
			b.Run(how+"/"+syncName(synced), func(b *testing.B) {
				src, p := fillSource(), filepath.Join(b.TempDir(), "m")
				b.SetBytes(fillSize)
				for b.Loop() {
					f, err := Create(p)
					if err != nil {
						b.Fatal(err)
					}
					if err := f.Grow(fillSize); err != nil {
						b.Fatal(err)
					}
					r, err := f.MapAll()
					if err != nil {
						b.Fatal(err)
					}
					if how == "PopulateWrite" {
						if err := r.PopulateWrite(); err != nil {
							b.Fatal(err)
						}
					}
					dst := r.Bytes()
					for off := 0; off < fillSize; off += len(src) {
						copy(dst[off:], src)
					}
					if !synced {
						b.StopTimer()
					}
					if err := f.Close(); err != nil {
						b.Fatal(err)
					}
					b.StopTimer()
					os.Remove(p)
					b.StartTimer()
				}
			})
		}
	}
}

func syncName(synced bool) string {
	if synced {
		return "synced"
	}
	return "cached"
}

// editFile creates a synced file of fillSize bytes for the edit benchmarks.
func editFile(b *testing.B) string {
	p := filepath.Join(b.TempDir(), "e")
	f, err := os.Create(p)
	if err != nil {
		b.Fatal(err)
	}
	src := fillSource()
	for off := 0; off < fillSize; off += len(src) {
		if _, err := f.Write(src); err != nil {
			b.Fatal(err)
		}
	}
	if err := f.Sync(); err != nil {
		b.Fatal(err)
	}
	f.Close()
	return p
}

// editIndex spreads successive edits over the file, one page apart.
func editIndex(i int) int { return (i * 4096 / 8 * 7) % (fillSize / 8) }

func BenchmarkEditSync(b *testing.B) {
	for _, how := range []string{"view+Sync", "Region.WriteAt+Sync", "File.WriteAt+SyncData"} {
		b.Run(how, func(b *testing.B) {
			f, err := OpenFile(editFile(b), ReadWrite, nil)
			if err != nil {
				b.Fatal(err)
			}
			defer f.Close()
			r, err := f.MapAll()
			if err != nil {
				b.Fatal(err)
			}
			xs, err := View[float64](r, 0, fillSize/8, binary.LittleEndian)
			if err != nil {
				b.Fatal(err)
			}
			var le [8]byte
			i := 0
			for b.Loop() {
				i++
				k := editIndex(i)
				switch how {
				case "view+Sync":
					xs[k] = float64(i)
					err = f.Sync()
				case "Region.WriteAt+Sync":
					binary.LittleEndian.PutUint64(le[:], uint64(i))
					if _, err := r.WriteAt(le[:], int64(k)*8); err != nil {
						b.Fatal(err)
					}
					err = f.Sync()
				case "File.WriteAt+SyncData":
					binary.LittleEndian.PutUint64(le[:], uint64(i))
					if _, err := f.WriteAt(le[:], int64(k)*8); err != nil {
						b.Fatal(err)
					}
					err = f.SyncData()
				}
				if err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
