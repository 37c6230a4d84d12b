package callpath

import (
	"context"
	"errors"
	"io"
	"net"
	"os"
	"syscall"

	"golang.org/x/sys/unix"
)

// uploadConn is a plain TCP connection to an upstream that writes a
// request body straight from the memory of its parts (one writev per
// socket buffer's worth), where the transport would copy the body through
// a 32 KiB buffer first: for a megabyte conversation that copy is most of
// what ctxhost adds to a call. The memory of the parts is read only
// inside each non-blocking writev, holding the body's lock, so a call
// that detaches its body (bodyReader) waits for one system call at most.
// A TLS connection wraps it and writes its own records, so this applies
// to plain-HTTP upstreams (a local gateway or model server).
type uploadConn struct {
	*net.TCPConn
	raw syscall.RawConn
}

// dialUpload dials with d and returns a TCP connection as an uploadConn.
func dialUpload(d *net.Dialer) func(ctx context.Context, network, addr string) (net.Conn, error) {
	return func(ctx context.Context, network, addr string) (net.Conn, error) {
		conn, err := d.DialContext(ctx, network, addr)
		if err != nil {
			return nil, err
		}
		if tc, ok := conn.(*net.TCPConn); ok {
			if raw, err := tc.SyscallConn(); err == nil {
				return &uploadConn{TCPConn: tc, raw: raw}, nil
			}
		}
		return conn, nil
	}
}

// ReadFrom writes r to the connection; the transport hands a request
// body over as an io.LimitedReader of its declared length.
func (c *uploadConn) ReadFrom(r io.Reader) (int64, error) {
	lr, ok := r.(*io.LimitedReader)
	if !ok {
		return c.TCPConn.ReadFrom(r)
	}
	br, ok := lr.R.(*bodyReader)
	if !ok {
		return c.TCPConn.ReadFrom(r)
	}
	var total int64
	for lr.N > 0 {
		var n int
		var werr error
		err := c.raw.Write(func(fd uintptr) bool {
			n, werr = br.writev(int(fd), lr.N)
			return !errors.Is(werr, unix.EAGAIN)
		})
		total += int64(n)
		lr.N -= int64(n)
		switch {
		case err != nil:
			return total, err
		case werr == io.EOF: // shorter than declared: the transport reports it
			return total, nil
		case werr != nil && !errors.Is(werr, unix.EINTR):
			return total, &net.OpError{Op: "write", Net: "tcp", Source: c.LocalAddr(), Addr: c.RemoteAddr(), Err: os.NewSyscallError("writev", werr)}
		}
	}
	return total, nil
}

// iovMax is how many parts one writev takes at most.
const iovMax = 1024

// writev writes the next parts, up to limit bytes, to fd with one
// non-blocking writev, holding the body's lock.
func (r *bodyReader) writev(fd int, limit int64) (int, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	var iovs [][]byte
	for _, p := range r.parts {
		if limit <= 0 || len(iovs) == iovMax {
			break
		}
		if int64(len(p)) > limit {
			p = p[:limit]
		}
		if len(p) > 0 {
			iovs = append(iovs, p)
			limit -= int64(len(p))
		}
	}
	if len(iovs) == 0 {
		return 0, io.EOF
	}
	n, err := unix.Writev(fd, iovs)
	if n > 0 {
		r.consume(n)
	}
	return max(n, 0), err
}
