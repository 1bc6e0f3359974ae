// Package parallel is mmapkit's one parallel loop: a bounded number of
// goroutines take the items of [0, n) in turn; the first error wins and
// the items not yet taken are never started.
//
// What is safe: tasks may run concurrently with each other, so each writes
// only its own part of any shared output; the per-goroutine state of Do is
// never shared between goroutines. What is not safe: a task that blocks
// forever blocks the loop.
package parallel

import (
	"sync"
	"sync/atomic"
)

// For calls task(j) for every j in [0, n) on at most workers goroutines
// (on the calling goroutine when workers or n is below 2) and returns the
// first error a task returned; once a task fails no further item starts.
func For(n, workers int, task func(j int) error) error {
	return Do(n, workers, func() struct{} { return struct{}{} }, nil,
		func(_ struct{}, j int) error { return task(j) })
}

// Do is For with state of each goroutine's own (scratch buffers, a
// decoder): start makes it before the goroutine's first item, and stop,
// if not nil, gets it back after its last.
func Do[S any](n, workers int, start func() S, stop func(S), task func(s S, j int) error) error {
	if n <= 0 {
		return nil
	}
	workers = min(workers, n)
	if workers < 2 {
		s := start()
		if stop != nil {
			defer stop(s)
		}
		for j := range n {
			if err := task(s, j); err != nil {
				return err
			}
		}
		return nil
	}
	var (
		next   atomic.Int64
		failed atomic.Bool
		once   sync.Once
		first  error
		wg     sync.WaitGroup
	)
	for range workers {
		wg.Go(func() {
			s := start()
			if stop != nil {
				defer stop(s)
			}
			for !failed.Load() {
				j := next.Add(1) - 1
				if j >= int64(n) {
					return
				}
				if err := task(s, int(j)); err != nil {
					once.Do(func() { first = err })
					failed.Store(true)
					return
				}
			}
		})
	}
	wg.Wait()
	return first
}
