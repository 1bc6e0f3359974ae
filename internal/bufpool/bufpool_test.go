package bufpool

import (
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestGetLengths(t *testing.T) {
	var p Pool
	for _, n := range []int{0, 1, 7, 4096} {
		b := p.Get(n)
		assert.Len(t, b, n)
		p.Put(b)
	}
}

// TestReuse: a buffer given back serves a later Get of no more bytes,
// uncleared; a larger Get gets a new buffer. sync.Pool may drop what it
// holds (a GC), so reuse is asserted only where it happened.
func TestReuse(t *testing.T) {
	var p Pool
	b := p.Get(64)
	copy(b, "kept")
	p.Put(b)
	got := p.Get(16)
	assert.Len(t, got, 16)
	if &got[0] == &b[0] {
		assert.Equal(t, "kept", string(got[:4]), "not cleared")
		assert.Equal(t, 64, cap(got))
	}
	p.Put(got)
	big := p.Get(128)
	assert.Len(t, big, 128)
	assert.NotSame(t, &b[0], &big[0], "a buffer too small is never handed out")
}

func TestConcurrent(t *testing.T) {
	var p Pool
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 1000 {
				b := p.Get(i%100 + 1)
				for k := range b {
					b[k] = byte(g)
				}
				for k := range b {
					if b[k] != byte(g) {
						t.Errorf("buffer shared between goroutines")
						return
					}
				}
				p.Put(b)
			}
		}()
	}
	wg.Wait()
}
