package main

import (
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mmapkit/mmapkit/benchmarks"
)

// progressAfter is how long work runs before its progress line appears:
// shorter work finishes before a line would help. MMAPKIT_PROGRESS_AFTER
// (a Go duration) changes it, for tests that cannot afford a second.
var progressAfter = func() time.Duration {
	if d, err := time.ParseDuration(os.Getenv("MMAPKIT_PROGRESS_AFTER")); err == nil {
		return d
	}
	return time.Second
}()

// progress is a line on stderr that shows how much of some work is done,
// how fast it goes and how long the rest will take: it appears only for
// work that has run longer than progressAfter, only when stderr is a
// terminal and only without --quiet. The rate is what was done since the
// work began divided by the time since then, so it is true from the first
// line on. A nil *progress is valid and does nothing. Add may be called
// from any goroutine.
type progress struct {
	e     *env
	total int64 // in bytes (or units); negative when unknown
	desc  string
	start time.Time
	done  atomic.Int64

	mu    sync.Mutex
	drawn time.Time // when the line was last drawn; zero before the first
	width int       // of the line last drawn
	// line makes the text of the line; nil means progressLine.
	line func(desc string, done, total int64, since time.Duration) string
}

// newProgress starts measuring work of total bytes (negative: unknown). It
// returns nil when no line can be shown.
func newProgress(e *env, total int64, desc string) *progress {
	if e.quiet || total == 0 {
		return nil
	}
	// Asked once: cat asks for each record, of which a file may hold
	// millions.
	e.ttyOnce.Do(func() { e.tty = isTerminal(e.stderr) })
	if !e.tty {
		return nil
	}
	return &progress{e: e, total: total, desc: desc, start: time.Now()}
}

// Add records n more bytes done.
func (p *progress) Add(n int64) {
	if p == nil {
		return
	}
	p.draw(p.done.Add(n), false)
}

// Set records that done bytes are done in all.
func (p *progress) Set(done int64) {
	if p == nil {
		return
	}
	p.done.Store(done)
	p.draw(done, false)
}

// Step records that done is done in all and that the work is now desc.
func (p *progress) Step(done int64, desc string) {
	if p == nil {
		return
	}
	p.mu.Lock()
	p.desc = desc
	p.mu.Unlock()
	p.Set(done)
}

// draw redraws the line if it is due: after progressAfter, then every
// tenth of a second.
func (p *progress) draw(done int64, final bool) {
	now := time.Now()
	since := now.Sub(p.start)
	if since < progressAfter {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if !final && !p.drawn.IsZero() && now.Sub(p.drawn) < 100*time.Millisecond {
		return
	}
	p.drawn = now
	text := progressLine
	if p.line != nil {
		text = p.line
	}
	line := text(p.desc, done, p.total, since)
	pad := ""
	if n := len([]rune(line)); n < p.width {
		pad = strings.Repeat(" ", p.width-n)
	}
	p.width = len([]rune(line))
	fmt.Fprint(p.e.stderr, "\r"+line+pad)
}

// progressLine is the text of the line: what, how much of how much, how
// fast, and how long the rest will take at that pace.
func progressLine(desc string, done, total int64, since time.Duration) string {
	return lineOf(desc, done, total, since, benchmarks.HumanSize)
}

// countLine is progressLine for work counted in units (files) instead of
// bytes.
func countLine(desc, unit string, done, total int64, since time.Duration) string {
	return lineOf(desc, done, total, since, func(n int64) string { return strconv.FormatInt(n, 10) + " " + unit })
}

// lineOf is the progress line with amounts written by size.
func lineOf(desc string, done, total int64, since time.Duration, size func(int64) string) string {
	rate := float64(done) / since.Seconds()
	var b strings.Builder
	b.WriteString(desc)
	if total > 0 {
		fmt.Fprintf(&b, " %s %s / %s", progressBar(float64(done)/float64(total)), size(done), size(total))
	} else {
		fmt.Fprintf(&b, " %s", size(done))
	}
	fmt.Fprintf(&b, ", %s/s, %s", size(int64(rate)), since.Round(time.Second))
	if total > 0 && rate > 0 && done < total {
		left := time.Duration(float64(total-done) / rate * float64(time.Second))
		fmt.Fprintf(&b, " elapsed, %s left", left.Round(time.Second))
	} else {
		b.WriteString(" elapsed")
	}
	return b.String()
}

// progressBar draws the fraction frac (at most 1) of some work as a
// percentage and a bar.
func progressBar(frac float64) string {
	frac = min(frac, 1)
	const width = 24
	full := int(frac * width)
	return fmt.Sprintf("%3.0f%% [%s%s]", 100*frac, strings.Repeat("=", full), strings.Repeat(" ", width-full))
}

// Done removes the line.
func (p *progress) Done() {
	if p == nil {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if !p.drawn.IsZero() {
		fmt.Fprint(p.e.stderr, "\r"+strings.Repeat(" ", p.width)+"\r")
	}
}

// newCountProgress is newProgress for work of total units (files; ""
// counts bytes), shown only while stdout, where the work's output goes,
// is not the terminal the line would be drawn over.
func newCountProgress(e *env, total int64, desc, unit string) *progress {
	if isTerminal(e.stdout) {
		return nil
	}
	p := newProgress(e, total, desc)
	if p != nil && unit != "" {
		p.line = func(desc string, done, total int64, since time.Duration) string {
			return countLine(desc, unit, done, total, since)
		}
	}
	return p
}

// countingWriter counts the bytes written through it into a progress.
type countingWriter struct {
	w   io.Writer
	bar *progress
}

func (c *countingWriter) Write(b []byte) (int, error) {
	n, err := c.w.Write(b)
	c.bar.Add(int64(n))
	return n, err
}
