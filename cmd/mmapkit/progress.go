package main

import (
	"time"

	"github.com/schollz/progressbar/v3"
)

// progress is a progress bar on stderr that appears only for work that has
// taken more than a second, only when stderr is a terminal and only without
// --quiet. A nil *progress is valid and does nothing.
type progress struct {
	e     *env
	total int64
	desc  string
	start time.Time
	done  int64
	bar   *progressbar.ProgressBar
}

// newProgress starts measuring work of total units (bytes when bytes is
// true). It returns nil when no bar can be shown.
func newProgress(e *env, total int64, desc string) *progress {
	if e.quiet || total <= 0 {
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

// Add records n more units of work done.
func (p *progress) Add(n int64) {
	if p == nil {
		return
	}
	p.done += n
	if p.bar == nil {
		if time.Since(p.start) < time.Second {
			return
		}
		p.bar = progressbar.NewOptions64(p.total,
			progressbar.OptionSetWriter(p.e.stderr),
			progressbar.OptionSetDescription(p.desc),
			progressbar.OptionShowBytes(true),
			progressbar.OptionSetWidth(30),
			progressbar.OptionThrottle(100*time.Millisecond),
			progressbar.OptionClearOnFinish(),
		)
		_ = p.bar.Set64(p.done)
		return
	}
	_ = p.bar.Add64(n)
}

// Done removes the bar.
func (p *progress) Done() {
	if p == nil || p.bar == nil {
		return
	}
	_ = p.bar.Finish()
	_ = p.bar.Clear()
}
