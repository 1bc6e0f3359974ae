//go:build unix && !linux

package mmapfile

import (
	"errors"
	"os"
)

func hugePageAdvice() (int, bool) { return 0, false }

// mapNoReserve: an inaccessible mapping commits no memory here anyway.
const mapNoReserve = 0

// preallocate is unsupported here: the file is grown with ftruncate, and a
// full disk shows up when pages are written.
func preallocate(f *os.File, off, n int64) error { return errors.ErrUnsupported }

// DropCache is unsupported outside Linux.
func (f *File) DropCache() error { return errors.ErrUnsupported }

// fsyncCoversMappings: here File.Sync flushes mapped views (msync,
// FlushViewOfFile) before syncing the file.
const fsyncCoversMappings = false

// pseudoFS: only Linux's pseudo file systems are recognised.
func pseudoFS(f *os.File, fi os.FileInfo) string { return "" }

func populateWrite(raw []byte) error { return errors.ErrUnsupported }

// fdatasync is a full sync here.
func fdatasync(f *os.File) error { return f.Sync() }
