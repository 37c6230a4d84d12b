package history

import (
	"encoding/binary"
	"errors"
	"fmt"
	"os"

	"github.com/ctxhost/ctxhost/sdk"
)

// spillMin is how many messages a History holds before the messages it
// omits leave memory: below it a spill file is not worth its descriptor.
// A variable so that tests can spill from the first message.
var spillMin = 2048

// A long session's messages are nearly all omitted from its view, and an
// omitted message is needed again only to be exported, read back by id or
// shown after ResetView. So once a History holds spillMin messages, a
// message the view omits is written to a private temporary file (removed
// as soon as it is created, so nothing is left behind) and only what
// compaction needs stays in memory: its id, kind, counts and flags. Memory
// then grows with the view and a few bytes per message, not with the
// transcript. Shown messages (and pinned ones, which are never omitted)
// always stay in memory, so building a view never reads the file.
//
// spillFile holds the encoded messages; writes happen under the History's
// write lock, reads (ReadAt) under its read lock and may run in parallel.
type spillFile struct {
	f    *os.File
	end  int64  // bytes written
	buf  []byte // encoded, not yet written (see History.flushSpill)
	from int64  // where buf goes in the file
}

// spillRef is where a spilled message lies in the file.
type spillRef struct {
	off int64
	n   int32
}

// newSpillFile creates the file and removes its name at once. Where an
// open file cannot be removed (Windows), there is no spill file: the
// messages stay in memory rather than leave files behind.
func newSpillFile() (*spillFile, error) {
	f, err := os.CreateTemp("", "ctxhost-history-*")
	if err != nil {
		return nil, fmt.Errorf("create history spill file: %w", err)
	}
	if err := os.Remove(f.Name()); err != nil {
		f.Close()
		_ = os.Remove(f.Name())
		return nil, fmt.Errorf("remove history spill file's name: %w", err)
	}
	return &spillFile{f: f}, nil
}

// add encodes m into the buffer and returns where it will lie.
func (s *spillFile) add(m *sdk.Message) spillRef {
	if len(s.buf) == 0 {
		s.from = s.end
	}
	start := len(s.buf)
	s.buf = appendMessage(s.buf, m)
	ref := spillRef{off: s.from + int64(start), n: int32(len(s.buf) - start)}
	s.end += int64(ref.n)
	return ref
}

// flush writes the buffer; on failure the buffer stays, for the caller
// to take its messages back (see History.flushSpill).
func (s *spillFile) flush() error {
	if _, err := s.f.WriteAt(s.buf, s.from); err != nil {
		return fmt.Errorf("write history spill file: %w", err)
	}
	s.drop()
	return nil
}

// drop empties the buffer.
func (s *spillFile) drop() {
	s.buf = s.buf[:0]
	if cap(s.buf) > 1<<20 {
		s.buf = nil
	}
}

// buffered decodes a message still in the buffer.
func (s *spillFile) buffered(ref spillRef) (sdk.Message, error) {
	at := ref.off - s.from
	return decodeMessage(s.buf[at : at+int64(ref.n)])
}

// read reads a written message back.
func (s *spillFile) read(ref spillRef) (sdk.Message, error) {
	b := make([]byte, ref.n)
	if _, err := s.f.ReadAt(b, ref.off); err != nil {
		return sdk.Message{}, fmt.Errorf("read history spill file: %w", err)
	}
	return decodeMessage(b)
}

// spillOut moves entry i's message to the spill file when the History is
// long enough (see spillMin). The caller holds h.mu for writing and calls
// flushSpill when done.
func (h *History) spillOut(i int) {
	e := &h.entries[i]
	if e.msg == nil || h.noSpill || len(h.entries) < spillMin || h.pinned(i) {
		return
	}
	if h.spill == nil {
		s, err := newSpillFile()
		if err != nil {
			h.noSpill = true // messages stay in memory
			return
		}
		h.spill = s
	}
	ref := h.spill.add(e.msg)
	e.refOff, e.refLen = ref.off, ref.n
	e.msg = nil
	h.spilling = append(h.spilling, i)
}

// flushSpill writes what spillOut buffered. If it cannot, those messages
// go back into memory and nothing is spilled again.
func (h *History) flushSpill() {
	if len(h.spilling) == 0 {
		return
	}
	s := h.spill
	if err := s.flush(); err != nil {
		for _, i := range h.spilling {
			e := &h.entries[i]
			m, derr := s.buffered(spillRef{e.refOff, e.refLen})
			if derr != nil { // cannot happen: the buffer holds what add encoded
				panic(fmt.Sprintf("history: message %s: %v", e.id, derr))
			}
			e.msg = &m
		}
		s.end = s.from
		s.drop()
		h.noSpill = true
	}
	h.spilling = h.spilling[:0]
}

// message is entry i's message, read back from the spill file when it was
// spilled (the caller holds h.mu; it must copy what it hands out, see
// cloneMessage). A spill file that cannot be read is a failure of the
// machine's temporary storage that leaves the history incomplete: it
// panics with the error rather than return a message that is not the one
// added.
func (h *History) message(i int) sdk.Message {
	e := &h.entries[i]
	if e.msg != nil {
		return *e.msg
	}
	m, err := h.spill.read(spillRef{e.refOff, e.refLen})
	if err != nil {
		panic(fmt.Sprintf("history: message %s: %v", e.id, err))
	}
	return m
}

// spillIn puts entry i's message back into memory (it is shown again).
func (h *History) spillIn(i int) {
	if e := &h.entries[i]; e.msg == nil {
		m := h.message(i)
		e.msg = &m
	}
}

// The encoding of a spilled message: every field of sdk.Message, its
// parts and tool calls in order, strings and byte slices as a length and
// the bytes, slices and maps as a count (-1: nil), so a message read back
// equals the one written (nil and empty apart) whatever its bytes.
// TestSpillCodecCoversFields fails when these types gain a field.

func appendMessage(b []byte, m *sdk.Message) []byte {
	b = appendStrings(b, m.ID, m.Role, m.Name, m.SpeakerType, m.Content, m.ToolCallID, m.ToolName, m.Kind)
	b = appendBool(b, m.Pinned)
	b = appendCount(b, m.Parts == nil, len(m.Parts))
	for i := range m.Parts {
		p := &m.Parts[i]
		b = appendStrings(b, p.Type, p.Text, p.MediaType, p.URL, p.Detail, p.Title, p.Signature, p.Opaque, p.Provider)
		b = appendCount(b, p.Data == nil, len(p.Data))
		b = append(b, p.Data...)
		b = binary.AppendVarint(b, int64(p.Width))
		b = binary.AppendVarint(b, int64(p.Height))
		b = binary.AppendVarint(b, int64(p.Pages))
	}
	b = appendCount(b, m.ToolCalls == nil, len(m.ToolCalls))
	for _, tc := range m.ToolCalls {
		b = appendStrings(b, tc.ID, tc.Name, tc.Arguments, tc.Signature)
	}
	b = appendCount(b, m.Metadata == nil, len(m.Metadata))
	for k, v := range m.Metadata {
		b = appendStrings(b, k, v)
	}
	return b
}

func appendStrings(b []byte, ss ...string) []byte {
	for _, s := range ss {
		b = binary.AppendUvarint(b, uint64(len(s)))
		b = append(b, s...)
	}
	return b
}

func appendBool(b []byte, v bool) []byte {
	if v {
		return append(b, 1)
	}
	return append(b, 0)
}

func appendCount(b []byte, isNil bool, n int) []byte {
	if isNil {
		return binary.AppendVarint(b, -1)
	}
	return binary.AppendVarint(b, int64(n))
}

var errSpillRecord = errors.New("history spill file: damaged record")

// decoder reads what appendMessage wrote; the first error sticks.
type decoder struct {
	b   []byte
	err error
}

func (d *decoder) fail() {
	if d.err == nil {
		d.err = errSpillRecord
	}
	d.b = nil
}

func (d *decoder) str() string {
	n, k := binary.Uvarint(d.b)
	if k <= 0 || uint64(len(d.b)-k) < n {
		d.fail()
		return ""
	}
	s := string(d.b[k : k+int(n)])
	d.b = d.b[k+int(n):]
	return s
}

func (d *decoder) int() int {
	v, k := binary.Varint(d.b)
	if k <= 0 {
		d.fail()
		return 0
	}
	d.b = d.b[k:]
	return int(v)
}

func (d *decoder) bool() bool {
	if len(d.b) == 0 {
		d.fail()
		return false
	}
	v := d.b[0] == 1
	d.b = d.b[1:]
	return v
}

// count reads a count; -1 is nil. It fails on a count the rest of the
// record cannot hold (each element takes a byte at least).
func (d *decoder) count() int {
	n := d.int()
	if n < -1 || n > len(d.b) {
		d.fail()
		return -1
	}
	return n
}

func decodeMessage(b []byte) (sdk.Message, error) {
	d := &decoder{b: b}
	var m sdk.Message
	m.ID, m.Role, m.Name, m.SpeakerType, m.Content, m.ToolCallID, m.ToolName, m.Kind =
		d.str(), d.str(), d.str(), d.str(), d.str(), d.str(), d.str(), d.str()
	m.Pinned = d.bool()
	if n := d.count(); n >= 0 {
		m.Parts = make([]sdk.Part, n)
		for i := range m.Parts {
			p := &m.Parts[i]
			p.Type, p.Text, p.MediaType, p.URL, p.Detail, p.Title, p.Signature, p.Opaque, p.Provider =
				d.str(), d.str(), d.str(), d.str(), d.str(), d.str(), d.str(), d.str(), d.str()
			if k := d.count(); k >= 0 {
				p.Data = append(make([]byte, 0, k), d.b[:k]...)
				d.b = d.b[k:]
			}
			p.Width, p.Height, p.Pages = d.int(), d.int(), d.int()
		}
	}
	if n := d.count(); n >= 0 {
		m.ToolCalls = make([]sdk.ToolCall, n)
		for i := range m.ToolCalls {
			tc := &m.ToolCalls[i]
			tc.ID, tc.Name, tc.Arguments, tc.Signature = d.str(), d.str(), d.str(), d.str()
		}
	}
	if n := d.count(); n >= 0 {
		m.Metadata = make(map[string]string, n)
		for range n {
			k := d.str()
			m.Metadata[k] = d.str()
		}
	}
	if d.err == nil && len(d.b) != 0 {
		d.fail()
	}
	if d.err != nil {
		return sdk.Message{}, d.err
	}
	return m, nil
}
