// Package bufpool keeps byte buffers for reuse: a decoder's scratch
// blocks, a chunk reader's buffers, so that a loop over many frames or
// chunks does not allocate (and clear) a buffer per item.
//
// What is safe: a Pool is safe for concurrent use, and its zero value is
// ready. What is not safe: a buffer from Get holds whatever its last user
// left (it is not cleared), and a buffer given to Put must not be used
// again by its giver.
package bufpool

import "sync"

// Pool holds byte buffers between uses.
type Pool struct{ p sync.Pool }

// Get returns a buffer of n bytes, not cleared: one the pool holds if it
// is large enough, else a new one.
func (p *Pool) Get(n int) []byte {
	if b, ok := p.p.Get().(*[]byte); ok && cap(*b) >= n {
		return (*b)[:n]
	}
	return make([]byte, n)
}

// Put gives b back to the pool for a later Get.
func (p *Pool) Put(b []byte) {
	if cap(b) > 0 {
		p.p.Put(&b)
	}
}
