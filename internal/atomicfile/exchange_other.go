//go:build !linux

package atomicfile

import "errors"

// exchange is not available here: the caller renames twice.
func exchange(a, b string) error { return errors.ErrUnsupported }
