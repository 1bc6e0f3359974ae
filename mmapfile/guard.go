package mmapfile

import (
	"runtime/debug"

	"github.com/mmapkit/mmapkit/internal/unsafeslice"
)

// faultAddr is implemented by the runtime error a fault raises under
// debug.SetPanicOnFault.
type faultAddr interface{ Addr() uintptr }

// guardLocked runs fn with faults turned into panics, and turns a panic
// whose fault address lies in this region's mapping into an ErrFault error.
// Any other panic propagates unchanged. r.mu must be held (read or write).
func (r *Region) guardLocked(fn func()) (err error) {
	old := debug.SetPanicOnFault(true)
	defer debug.SetPanicOnFault(old)
	defer func() {
		v := recover()
		if v == nil {
			return
		}
		fa, ok := v.(faultAddr)
		if !ok {
			panic(v)
		}
		addr := fa.Addr()
		base := unsafeslice.Addr(r.raw)
		if base == 0 || addr < base || addr >= base+uintptr(len(r.raw)) {
			panic(v)
		}
		fileOff := r.off - int64(len(r.raw)-len(r.data)) + int64(addr-base)
		// The runtime's message ("invalid memory address or nil pointer
		// dereference") would mislead; the offset says all there is.
		err = r.errf(fileOff, "access", ErrFault)
	}()
	fn()
	return nil
}
