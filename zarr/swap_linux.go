//go:build linux

package zarr

import "golang.org/x/sys/unix"

// exchange swaps the directories a and b in one atomic rename, so that a
// reader of b sees the old store or the new, never neither.
func exchange(a, b string) error {
	return unix.Renameat2(unix.AT_FDCWD, a, unix.AT_FDCWD, b, unix.RENAME_EXCHANGE)
}
