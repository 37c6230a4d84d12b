package callpath

import (
	"encoding/json"
	"errors"
	"io"
	"sync"
)

// body is a request body in parts, sent in order: the fields a body is
// built from are sent where they are, not copied into one array first (a
// megabyte conversation would be copied, and its copy left to the
// collector, on every call).
type body struct {
	parts [][]byte
	n     int // the bytes of all parts
}

// oneBody is the body of one array.
func oneBody(b []byte) body { return body{parts: [][]byte{b}, n: len(b)} }

// len is the body's length in bytes.
func (b body) len() int { return b.n }

// bytes is the body joined into one array.
func (b body) bytes() []byte {
	out := make([]byte, 0, b.n)
	for _, p := range b.parts {
		out = append(out, p...)
	}
	return out
}

// bodyBuilder builds a body: short pieces (names, separators, small
// values) are copied together into shared chunks, long values are parts
// of their own.
type bodyBuilder struct {
	chunk []byte // the pieces copied since the last long value
	parts [][]byte
	n     int
}

// longPart is the length from which a value is sent where it is rather
// than copied.
const longPart = 512

func (bb *bodyBuilder) write(p []byte) {
	if len(p) < longPart {
		bb.chunk = append(bb.chunk, p...)
		return
	}
	bb.cut()
	bb.parts = append(bb.parts, p)
	bb.n += len(p)
}

func (bb *bodyBuilder) writeByte(c byte) { bb.chunk = append(bb.chunk, c) }

// cut ends the current chunk as a part; the next chunk is a new array,
// so that the part is never written again.
func (bb *bodyBuilder) cut() {
	if len(bb.chunk) > 0 {
		bb.parts = append(bb.parts, bb.chunk)
		bb.n += len(bb.chunk)
		bb.chunk = nil
	}
}

func (bb *bodyBuilder) body() body {
	bb.cut()
	return body{parts: bb.parts, n: bb.n}
}

// member writes `"key":value`, after a comma unless it is the first.
func (bb *bodyBuilder) member(first bool, key string, v json.RawMessage) {
	if !first {
		bb.writeByte(',')
	}
	k, _ := json.Marshal(key)
	bb.write(k)
	bb.writeByte(':')
	bb.write(v)
}

// bodyReader reads a body for the transport, which may go on reading it
// after the response is in (an upstream may answer before it has read the
// whole request). The parts may be memory a later call reuses (an
// assembler's payload buffer), so the call detaches its readers before it
// lets the session go: whatever is not read by then is copied, and the
// transport reads the copy.
type bodyReader struct {
	mu    sync.Mutex
	parts [][]byte // what is left to read
}

// Read copies the next bytes of the body into p.
func (r *bodyReader) Read(p []byte) (int, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	n := 0
	for _, part := range r.parts {
		if n == len(p) {
			break
		}
		n += copy(p[n:], part)
	}
	r.consume(n)
	if n == 0 && len(r.parts) == 0 && len(p) > 0 {
		return 0, io.EOF
	}
	return n, nil
}

// consume drops the first n bytes of what is left to read.
func (r *bodyReader) consume(n int) {
	for n > 0 && len(r.parts) > 0 {
		c := min(n, len(r.parts[0]))
		n -= c
		if r.parts[0] = r.parts[0][c:]; len(r.parts[0]) == 0 {
			r.parts = r.parts[1:]
		}
	}
}

// Close drops what is left: the transport is done with the body.
func (r *bodyReader) Close() error {
	r.mu.Lock()
	r.parts = nil
	r.mu.Unlock()
	return nil
}

// detach replaces what is left to read by a copy of it.
func (r *bodyReader) detach() {
	r.mu.Lock()
	defer r.mu.Unlock()
	if len(r.parts) > 0 {
		r.parts = [][]byte{body{parts: r.parts, n: partsLen(r.parts)}.bytes()}
	}
}

func partsLen(parts [][]byte) int {
	n := 0
	for _, p := range parts {
		n += len(p)
	}
	return n
}

// bodyReaders are the readers of one body handed to the transport (a
// request it retries reads the body anew).
type bodyReaders struct {
	mu       sync.Mutex
	b        body
	readers  []*bodyReader
	detached bool
}

// errBodyDetached: the transport asked to read a body anew after its call
// was over (it asks only while the call's request is in progress).
var errBodyDetached = errors.New("the request body was released when its call ended")

// open returns a new reader of the whole body.
func (rs *bodyReaders) open() (*bodyReader, error) {
	rs.mu.Lock()
	defer rs.mu.Unlock()
	if rs.detached {
		return nil, errBodyDetached
	}
	r := &bodyReader{parts: append([][]byte(nil), rs.b.parts...)}
	rs.readers = append(rs.readers, r)
	return r, nil
}

// detach detaches every reader opened (see bodyReader); none may be
// opened after it.
func (rs *bodyReaders) detach() {
	rs.mu.Lock()
	defer rs.mu.Unlock()
	for _, r := range rs.readers {
		r.detach()
	}
	rs.detached = true
}
