package serve

import (
	"io"
	"net"
	"sync"
	"time"
)

// limitListener accepts at most n connections at a time: Accept waits
// for one to close first, and the connections beyond wait in the kernel's
// listen backlog.
type limitListener struct {
	net.Listener
	sem       chan struct{}
	closeOnce sync.Once
	done      chan struct{}
}

func newLimitListener(l net.Listener, n int) *limitListener {
	return &limitListener{Listener: l, sem: make(chan struct{}, n), done: make(chan struct{})}
}

func (l *limitListener) Accept() (net.Conn, error) {
	select {
	case l.sem <- struct{}{}:
	case <-l.done:
		return nil, net.ErrClosed
	}
	c, err := l.Listener.Accept()
	if err != nil {
		<-l.sem
		return nil, err
	}
	return &limitConn{Conn: c, release: func() { <-l.sem }}, nil
}

func (l *limitListener) Close() error {
	l.closeOnce.Do(func() { close(l.done) })
	return l.Listener.Close()
}

type limitConn struct {
	net.Conn
	once    sync.Once
	release func()
}

func (c *limitConn) Close() error {
	err := c.Conn.Close()
	c.once.Do(c.release)
	return err
}

// ReadFrom passes on to the connection's own ReadFrom (sendfile on Linux):
// embedding net.Conn alone would hide it, and every response would be
// copied through a buffer.
func (c *limitConn) ReadFrom(r io.Reader) (int64, error) {
	if rf, ok := c.Conn.(io.ReaderFrom); ok {
		return rf.ReadFrom(r)
	}
	return io.Copy(struct{ io.Writer }{c.Conn}, r)
}

// stallListener gives each connection a deadline for every write (and
// every piece of a sendfile), so that a client that takes no bytes for
// stall is dropped, however long the whole response takes.
type stallListener struct {
	net.Listener
	stall time.Duration
}

func (l *stallListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	return &stallConn{Conn: c, stall: l.stall}, nil
}

type stallConn struct {
	net.Conn
	stall time.Duration
}

func (c *stallConn) Write(b []byte) (int, error) {
	c.SetWriteDeadline(time.Now().Add(c.stall))
	return c.Conn.Write(b)
}

// sendfilePiece is how much one sendfile may move under one deadline.
const sendfilePiece = 4 << 20

// ReadFrom passes a file on to the connection's own ReadFrom (sendfile on
// Linux) a piece at a time, each under a fresh write deadline. A limited
// reader is unwrapped first: sendfile sees through one limit, not two.
func (c *stallConn) ReadFrom(r io.Reader) (int64, error) {
	rf, ok := c.Conn.(io.ReaderFrom)
	if !ok {
		return io.Copy(struct{ io.Writer }{c}, r)
	}
	src, left := r, int64(-1)
	if lr, ok := r.(*io.LimitedReader); ok {
		src, left = lr.R, lr.N
		defer func() { lr.N = left }()
	}
	var total int64
	for left != 0 {
		piece := int64(sendfilePiece)
		if left > 0 {
			piece = min(piece, left)
		}
		c.SetWriteDeadline(time.Now().Add(c.stall))
		n, err := rf.ReadFrom(&io.LimitedReader{R: src, N: piece})
		total += n
		if left > 0 {
			left -= n
		}
		if err != nil || n < piece {
			return total, err
		}
	}
	return total, nil
}
