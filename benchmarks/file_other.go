//go:build !linux

package benchmarks

import "errors"

// residentPages is known only on Linux here.
func residentPages(path string) (resident, pages int64, err error) {
	return 0, 0, errors.ErrUnsupported
}
