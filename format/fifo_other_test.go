//go:build !unix

package format

import "errors"

func mkfifo(path string) error { return errors.ErrUnsupported }
