//go:build !unix

package serve

import "testing"

// mkfifo: no FIFOs here; the path stays absent, which is 404 too.
func mkfifo(*testing.T, string) {}
