package parallel

import (
	"errors"
	"sync"
	"sync/atomic"
	"testing"
)

func TestForRunsEveryItemOnce(t *testing.T) {
	for _, tc := range []struct{ n, workers int }{
		{0, 4}, {1, 4}, {7, 1}, {7, 0}, {100, 3}, {3, 100},
	} {
		counts := make([]atomic.Int32, tc.n)
		if err := For(tc.n, tc.workers, func(j int) error {
			counts[j].Add(1)
			return nil
		}); err != nil {
			t.Fatalf("n=%d workers=%d: %v", tc.n, tc.workers, err)
		}
		for j := range counts {
			if c := counts[j].Load(); c != 1 {
				t.Errorf("n=%d workers=%d: item %d ran %d times", tc.n, tc.workers, j, c)
			}
		}
	}
}

func TestForFirstErrorStopsTheRest(t *testing.T) {
	boom := errors.New("boom")
	// One worker: the items are taken in order, so none after the failure starts.
	var ran []int
	err := For(10, 1, func(j int) error {
		ran = append(ran, j)
		if j == 3 {
			return boom
		}
		return nil
	})
	if !errors.Is(err, boom) || len(ran) != 4 {
		t.Fatalf("one worker: err %v, ran %v; want boom after items 0-3", err, ran)
	}
	// Several workers: the failing item's error comes back, and after it at
	// most one item per other worker starts (each may have taken one
	// before it saw the failure).
	const workers = 4
	var started atomic.Int32
	release := make(chan struct{})
	err = For(1000, workers, func(j int) error {
		started.Add(1)
		if j == 0 {
			close(release)
			return boom
		}
		<-release
		return nil
	})
	if !errors.Is(err, boom) {
		t.Fatalf("%d workers: err %v, want boom", workers, err)
	}
	if n := started.Load(); n > 2*workers {
		t.Errorf("%d workers: %d items started after the first failed", workers, n)
	}
}

func TestDoGivesEachGoroutineItsOwnState(t *testing.T) {
	type state struct{ items []int }
	var mu sync.Mutex
	var made, stopped int
	seen := map[*state]bool{}
	var total atomic.Int32
	err := Do(200, 3, func() *state {
		mu.Lock()
		defer mu.Unlock()
		made++
		return &state{}
	}, func(s *state) {
		mu.Lock()
		defer mu.Unlock()
		stopped++
		if seen[s] {
			t.Error("a state stopped twice")
		}
		seen[s] = true
		total.Add(int32(len(s.items)))
	}, func(s *state, j int) error {
		s.items = append(s.items, j) // unsynchronised: the race detector checks it is not shared
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if made != stopped || made < 1 || made > 3 {
		t.Errorf("made %d states, stopped %d; want the same, 1 to 3", made, stopped)
	}
	if total.Load() != 200 {
		t.Errorf("the states saw %d items, want 200", total.Load())
	}
}
