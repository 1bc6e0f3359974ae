//go:build !unix

package serve

import "os"

// oNonblock: opening a file does not block here.
const oNonblock = 0

func clearNonblock(*os.File) error { return nil }

// inode is not known here: the ETag rests on size and modification time.
func inode(os.FileInfo) uint64 { return 0 }

// device is not known here: a file's identity rests on the rest.
func device(os.FileInfo) uint64 { return 0 }
