package main

import (
	"bytes"
	"os"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
)

func TestProgressOnlyOnATerminalAfterASecond(t *testing.T) {
	var buf bytes.Buffer
	assert.Nil(t, newProgress(&env{stderr: &buf}, 100, "x"), "not a terminal")
	f, err := os.CreateTemp(t.TempDir(), "stderr")
	assert.NoError(t, err)
	defer f.Close()
	assert.Nil(t, newProgress(&env{stderr: f}, 100, "x"), "a regular file is not a terminal")
	var p *progress
	p.Add(1) // a nil bar does nothing
	p.Done()

	// Work shorter than a second draws nothing; longer work draws a line.
	p = &progress{e: &env{stderr: &buf}, total: 100, desc: "scan", start: time.Now()}
	p.Add(10)
	assert.Zero(t, buf.Len())
	p.start = time.Now().Add(-2 * time.Second)
	p.Add(40)
	assert.Contains(t, buf.String(), "scan")
	assert.Contains(t, buf.String(), " 50%")
	p.Done()
	assert.Contains(t, buf.String(), "\r   ", "Done blanks the line")
}

// The rate is the work done since it began over the time since then, so
// that the first line already tells the truth, and so does the time left.
func TestProgressLine(t *testing.T) {
	for _, c := range []struct {
		done, total int64
		since       time.Duration
		want        string
	}{
		{512 << 20, 1 << 30, 2 * time.Second, "convert x.zarr  50% [============            ] 512 MiB / 1 GiB, 256 MiB/s, 2s elapsed, 2s left"},
		{1 << 30, 1 << 30, 4 * time.Second, "convert x.zarr 100% [========================] 1 GiB / 1 GiB, 256 MiB/s, 4s elapsed"},
		{3 << 20, -1, 3 * time.Second, "convert x.zarr 3 MiB, 1 MiB/s, 3s elapsed"},
		{0, 100, time.Second, "convert x.zarr   0% [                        ] 0 B / 100 B, 0 B/s, 1s elapsed"},
	} {
		assert.Equal(t, c.want, progressLine("convert x.zarr", c.done, c.total, c.since))
	}
	assert.Equal(t, "ls  25% [======                  ] 250 files / 1000 files, 125 files/s, 2s elapsed, 6s left",
		countLine("ls", "files", 250, 1000, 2*time.Second))
}

// bench's line: the step, cut to fit, and the time spent of the budget.
func TestBenchLine(t *testing.T) {
	for _, c := range []struct {
		desc        string
		done, total time.Duration
		want        string
	}{
		{"bench 1/3 x.npy: 0: view scan, warm", 12 * time.Second, 30 * time.Second,
			"bench 1/3 x.npy: 0: view scan, warm                       40% [=========               ] 12s of 30s"},
		{"bench 2/2 a-file-with-a-very-long-name.h5: /group/dataset: parallel view scan, cold", 40 * time.Second, 30 * time.Second,
			"bench 2/2 a-file-with-a-very-long-name.h5: /group/datas… 100% [========================] 40s of 30s"},
	} {
		assert.Equal(t, c.want, benchLine(c.desc, int64(c.done), int64(c.total), 0))
	}
}
