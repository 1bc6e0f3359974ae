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

	// Work shorter than a second draws nothing; longer work draws a bar.
	p = &progress{e: &env{stderr: &buf}, total: 100, desc: "scan", start: time.Now()}
	p.Add(10)
	assert.Zero(t, buf.Len())
	p.start = time.Now().Add(-2 * time.Second)
	p.Add(40)
	p.Done()
	assert.Contains(t, buf.String(), "scan")
	assert.Contains(t, buf.String(), "50%")
}
