//go:build !linux

package zarr

import "errors"

// exchange is not atomic here: replace falls back to two renames.
func exchange(a, b string) error { return errors.ErrUnsupported }
