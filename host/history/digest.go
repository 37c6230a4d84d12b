package history

import (
	"encoding/binary"
	"fmt"

	"github.com/cespare/xxhash/v2"

	"github.com/ctxhost/ctxhost/sdk"
)

// chainOf is the digest of a history whose messages before m digest to
// prev, once m is appended: a hash of prev and of what m is (its id,
// role, text, parts, tool calls and the tool call it answers). Two
// histories of n messages digest alike only when they hold the same
// messages in the same order, whatever happened to each in between
// (cleared, rewound to a checkpoint, forked).
func chainOf(prev uint64, m *sdk.Message) uint64 {
	d := xxhash.New()
	var b [8]byte
	binary.LittleEndian.PutUint64(b[:], prev)
	_, _ = d.Write(b[:])
	field := func(s string) {
		binary.LittleEndian.PutUint64(b[:], uint64(len(s)))
		_, _ = d.Write(b[:])
		_, _ = d.WriteString(s)
	}
	field(m.ID)
	field(m.Role)
	field(m.Name)
	field(m.Content)
	field(m.ToolCallID)
	for i := range m.ToolCalls {
		tc := &m.ToolCalls[i]
		field("call")
		field(tc.ID)
		field(tc.Name)
		field(tc.Arguments)
	}
	for i := range m.Parts {
		p := &m.Parts[i]
		field("part")
		field(p.Type)
		field(p.Text)
		field(p.MediaType)
		field(string(p.Data))
		field(p.URL)
		field(p.Signature)
		field(p.Opaque)
	}
	return d.Sum64()
}

// Digest identifies the first n messages of the history (all of them
// when n is past its length): equal digests mean the same messages in
// the same order (see chainOf). The digest of no messages is "".
func (h *History) Digest(n int) string {
	h.mu.RLock()
	defer h.mu.RUnlock()
	n = min(n, len(h.entries))
	if n <= 0 {
		return ""
	}
	return fmt.Sprintf("%016x", h.entries[n-1].chain)
}
