package serve

import (
	"io"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// copyingConn is a connection that says whether a response came through
// its ReadFrom (where a TCP connection uses sendfile) or through Write.
type copyingConn struct {
	net.Conn
	readFrom, written int64
}

func (c *copyingConn) ReadFrom(r io.Reader) (int64, error) {
	n, err := io.Copy(io.Discard, r)
	c.readFrom += n
	return n, err
}

func (c *copyingConn) Write(b []byte) (int, error) {
	c.written += int64(len(b))
	return len(b), nil
}

func (c *copyingConn) SetWriteDeadline(time.Time) error { return nil }

// The connections the server wraps keep the underlying ReadFrom, so that
// file bodies go by sendfile, not through a buffer.
func TestConnsKeepReadFrom(t *testing.T) {
	under := &copyingConn{}
	c := &stallConn{Conn: &limitConn{Conn: under, release: func() {}}, stall: time.Second}
	n, err := c.ReadFrom(io.LimitReader(strings.NewReader(strings.Repeat("x", 10<<20)), 9<<20))
	require.NoError(t, err)
	assert.Equal(t, int64(9<<20), n)
	assert.Equal(t, int64(9<<20), under.readFrom, "by the connection's ReadFrom")
	assert.Zero(t, under.written, "nothing copied through Write")
}
