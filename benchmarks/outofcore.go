package benchmarks

import (
	"fmt"
	"github.com/mmapkit/mmapkit/mmapfile"
	"os"
	"path/filepath"
	"time"
)

// The out-of-core figures read a file larger than the machine's memory,
// which is when people reach for mapping: a view scan against read(2)
// streaming of the same file, and random elements through a view against
// pread, each with its peak resident memory. The file is OutOfCore bytes
// (1.5 times the machine's memory when asked without a size): such a run
// writes it and reads it three times, so it is measured only when asked
// for (--out-of-core) on a disk with room (--dir), and never with --quick.

// outOfCoreRandom is how many random elements the out-of-core figures
// fetch: each is a read from the disk (a few hundred microseconds), so
// fewer than the in-memory figures' million give as steady a mean.
const outOfCoreRandom = 20_000

// outOfCoreWindow is how much of the mapping a scan reads before it lets
// go of the pages behind it.
const outOfCoreWindow = 256 << 20

// outOfCore holds the out-of-core measurements, made once for the four
// figures.
type outOfCore struct {
	err                  error
	size                 int64
	scan, read           float64 // GB/s
	scanRSS, readRSS     int64   // peak resident bytes during each
	viewUs, preadUs      float64 // per random element
	viewRSS, preadRSSMax int64
}

// outOfCoreSize is the file size the out-of-core figures use, or why
// they are not measured.
func (s *suite) outOfCoreSize() (int64, error) {
	if s.o.Quick {
		return 0, &notMeasured{"not part of --quick"}
	}
	mem := s.res.Machine.MemTotal
	size := s.o.OutOfCore
	if size < 0 { // --out-of-core given without a size: 1.5 times the memory
		if mem <= 0 {
			return 0, &notMeasured{"the machine's memory is unknown here; give --out-of-core SIZE"}
		}
		size = mem / 2 * 3
	}
	if size == 0 {
		want := "1.5 times the memory"
		if mem > 0 {
			want = HumanSize(mem/2*3/8*8) + ", " + want
		}
		return 0, &notMeasured{fmt.Sprintf("needs --out-of-core (a file of %s) and room for it on --dir", want)}
	}
	size = size / 8 * 8
	if free, err := freeBytes(s.dir); err == nil && free < size+1<<30 {
		return 0, &notMeasured{fmt.Sprintf("needs %s free beside %s for a file of %s; there are %s", HumanSize(size+1<<30), s.dir, HumanSize(size), HumanSize(free))}
	}
	return size, nil
}

// measureOutOfCore writes the out-of-core file, measures every figure on
// it and removes it.
func (s *suite) measureOutOfCore() *outOfCore {
	if s.ooc != nil {
		return s.ooc
	}
	r := &outOfCore{}
	s.ooc = r
	if r.size, r.err = s.outOfCoreSize(); r.err != nil {
		return r
	}
	path := filepath.Join(s.dir, "outofcore.f64")
	defer os.Remove(path)
	s.o.progress("writing %s of float64 for the out-of-core figures", HumanSize(r.size))
	if r.err = writeGenerated(path, r.size, 8, genF64); r.err != nil {
		return r
	}
	steps := []struct {
		what string
		fn   func() error
	}{
		{"read(2) streaming", func() (err error) { r.read, r.readRSS, err = s.oocStream(path, false); return err }},
		{"view scan", func() (err error) { r.scan, r.scanRSS, err = s.oocStream(path, true); return err }},
		{"random view", func() (err error) { r.viewUs, r.viewRSS, err = s.oocRandom(path, true); return err }},
		{"random pread", func() (err error) { r.preadUs, r.preadRSSMax, err = s.oocRandom(path, false); return err }},
	}
	for _, st := range steps {
		if r.err = s.ctx.Err(); r.err != nil {
			return r
		}
		s.o.progress("out of core: %s of %s, cold", st.what, HumanSize(r.size))
		if r.err = dropCache(path); r.err != nil {
			r.err = &notMeasured{"cannot drop the page cache here: " + r.err.Error()}
			return r
		}
		if r.err = st.fn(); r.err != nil {
			return r
		}
	}
	return r
}

// oocStream scans the file cold, through a view or with read(2), and
// returns GB/s and the peak resident memory while it ran.
func (s *suite) oocStream(path string, view bool) (float64, int64, error) {
	peak := watchRSS()
	var sum float64
	var n int
	d, err := timed(func() (err error) {
		if view {
			sum, n, err = scanViewDropping(path, outOfCoreWindow)
		} else {
			sum, n, err = scanReadStreaming(path)
		}
		return err
	})
	rss := peak()
	if err != nil {
		return 0, 0, err
	}
	if err := checkSum("out-of-core scan", sum, n); err != nil {
		return 0, 0, err
	}
	return gbps(int64(n)*8, d), rss, nil
}

// oocRandom reads RandomCount random elements of the file cold, through a
// view or with pread, and returns µs per element and the peak resident
// memory.
func (s *suite) oocRandom(path string, view bool) (float64, int64, error) {
	fi, err := os.Stat(path)
	if err != nil {
		return 0, 0, err
	}
	idx := randomIndexes(min(s.o.randomN, outOfCoreRandom), int(fi.Size()/8))
	want := 0.0
	for _, i := range idx {
		want += value(i)
	}
	peak := watchRSS()
	var sum float64
	d, err := timed(func() (err error) {
		if view {
			sum, err = randomViaView(path, idx)
		} else {
			sum, err = randomViaPread(path, idx)
		}
		return err
	})
	rss := peak()
	if err != nil {
		return 0, 0, err
	}
	if sum != want {
		return 0, 0, fmt.Errorf("out-of-core random: sum %v, want %v", sum, want)
	}
	return d.Seconds() * 1e6 / float64(len(idx)), rss, nil
}

// randomViaView reads the elements idx through a view advised random: a
// fault on a mapping otherwise reads ahead around the page (hundreds of
// KiB from the disk for 8 bytes), which made a cold random element cost
// 3.6 ms against pread's 0.13 ms on a 36 GiB file.
func randomViaView(path string, idx []int) (float64, error) {
	f, xs, err := openViewF64(path, 0, &mmapfile.Options{Advice: mmapfile.AdviceRandom})
	if err != nil {
		return 0, err
	}
	defer f.Close()
	return sumAt(xs, idx), nil
}

func randomViaPread(path string, idx []int) (float64, error) {
	f, err := os.Open(path)
	if err != nil {
		return 0, err
	}
	defer f.Close()
	return preadAt(f, idx)
}

// watchRSS samples the process's resident memory every few milliseconds
// until the returned function is called, which returns how far the peak
// rose above where it was when the watch began: what the measured work
// holds, not the rest of the run's memory.
func watchRSS() func() int64 {
	stop, done := make(chan struct{}), make(chan int64)
	base := residentBytes()
	go func() {
		peak := base
		t := time.NewTicker(5 * time.Millisecond)
		defer t.Stop()
		for {
			select {
			case <-stop:
				done <- max(peak, residentBytes()) - base
				return
			case <-t.C:
				peak = max(peak, residentBytes())
			}
		}
	}()
	return func() int64 { close(stop); return <-done }
}

func (s *suite) outOfCoreScan() (float64, int64, error) {
	r := s.measureOutOfCore()
	if r.err != nil {
		return 0, 0, r.err
	}
	s.noteOf["out_of_core_scan"] = fmt.Sprintf("a %s file, %.2f× the memory; resident memory grew by %s at most (read(2): %s)", HumanSize(r.size), float64(r.size)/float64(max(s.res.Machine.MemTotal, 1)), HumanSize(r.scanRSS), HumanSize(r.readRSS))
	return r.scan, r.size, nil
}

func (s *suite) outOfCoreRead() (float64, int64, error) {
	r := s.measureOutOfCore()
	if r.err != nil {
		return 0, 0, r.err
	}
	s.noteOf["out_of_core_read"] = fmt.Sprintf("resident memory grew by %s at most", HumanSize(r.readRSS))
	return r.read, r.size, nil
}

func (s *suite) outOfCoreRandom() (float64, int64, error) {
	r := s.measureOutOfCore()
	if r.err != nil {
		return 0, 0, r.err
	}
	s.noteOf["out_of_core_random"] = fmt.Sprintf("%d random elements of a %s file, cold; resident memory grew by %s at most", min(s.o.randomN, outOfCoreRandom), HumanSize(r.size), HumanSize(r.viewRSS))
	return r.viewUs, 0, nil
}

func (s *suite) outOfCorePread() (float64, int64, error) {
	r := s.measureOutOfCore()
	if r.err != nil {
		return 0, 0, r.err
	}
	return r.preadUs, 0, nil
}
