package server

import (
	"crypto/sha256"
	"encoding"
	"encoding/hex"
	"fmt"
	"hash"
	"strconv"
	"unicode/utf8"
)

// payloadTag identifies a payload's bytes, media type and system text: a
// SHA-256 over the lengths and bytes of the media type and the system
// text, whether there is one, then the payload's bytes and its length;
// hex, 32 characters. Equal tags, equal payloads. The payload comes last
// so that the hash of a payload that extends another can start from the
// state the other's left at a byte they share (tagMemo).
func payloadTag(payload []byte, mediaType, system string, hasSystem bool) string {
	h := tagHeader(mediaType, system, hasSystem)
	h.Write(payload)
	return tagSum(h, len(payload))
}

// tagHeader is the hash state after the media type and system text.
func tagHeader(mediaType, system string, hasSystem bool) hash.Hash {
	h := sha256.New()
	var buf []byte
	for _, part := range []string{mediaType, system} {
		buf = strconv.AppendInt(buf[:0], int64(len(part)), 10)
		buf = append(buf, ':')
		h.Write(buf)
		h.Write([]byte(part))
	}
	if hasSystem {
		h.Write([]byte{1})
	} else {
		h.Write([]byte{0})
	}
	return h
}

// tagSum ends a tag's hash with the payload's length.
func tagSum(h hash.Hash, size int) string {
	h.Write(strconv.AppendInt([]byte{':'}, int64(size), 10))
	sum := h.Sum(nil)
	return hex.EncodeToString(sum[:16])
}

// tagMark is how many payload bytes lie between two of the hash states a
// tagMemo keeps.
const tagMark = 32 << 10

// tagMemo remembers, for each agent of a session, the last payload the
// service tagged: its number in the session (the turn's
// Prepared.PayloadID), its tag, and the hash state at every tagMark bytes of it.
// A payload sent again is not hashed again, and one that repeats the
// start of the last one (Prepared.Extends, Repeats) is hashed from the
// last state within what it repeats: a turn that appends to a long
// payload costs what it appended, not the payload's length.
type tagMemo map[string]*taggedPayload

type taggedPayload struct {
	id        uint64 // the turn's Prepared.PayloadID; 0: not known
	tag       string
	size      int
	mediaType string
	system    string
	hasSystem bool
	marks     [][]byte // marks[i]: the hash state after the header and the first i*tagMark payload bytes
	// prev is the payload tagged before this one (its own prev dropped):
	// a turn's payload is tagged when its save marks the checkpoint, before
	// Prepare's answer asks what the caller held (before).
	prev *taggedPayload
}

// payloadLink is what the host says of a payload: its number, and the
// number of the payload whose first Repeats bytes it repeats.
type payloadLink struct {
	id, extends uint64
	repeats     int
}

// before returns the last payload tagged for agent before the payload
// numbered id (nil: none): the one before it when id was tagged already
// (its checkpoint's tag), else the last.
func (m tagMemo) before(agent string, id uint64) *taggedPayload {
	last := m[agent]
	if last != nil && id != 0 && last.id == id {
		return last.prev
	}
	return last
}

// tag returns the payload's tag and remembers it as agent's last.
func (m tagMemo) tag(agent string, link payloadLink, payload []byte, mediaType, system string, hasSystem bool) string {
	last := m[agent]
	if last != nil && link.id != 0 && last.id == link.id && last.size == len(payload) {
		return last.tag // the same payload again
	}
	next := &taggedPayload{id: link.id, size: len(payload), mediaType: mediaType, system: system, hasSystem: hasSystem, prev: last}
	if last != nil {
		last.prev = nil // one payload back is all before needs
	}
	var h hash.Hash
	from := 0
	if last != nil && link.id != 0 && link.extends == last.id && link.extends != 0 && link.repeats <= last.size &&
		last.mediaType == mediaType && last.system == system && last.hasSystem == hasSystem {
		i := min(link.repeats/tagMark, len(last.marks)-1)
		if st, err := restoreHash(last.marks[i]); err == nil {
			h, from = st, i*tagMark
			next.marks = last.marks[: i+1 : i+1]
		}
	}
	if h == nil {
		h = tagHeader(mediaType, system, hasSystem)
		next.marks = [][]byte{saveHash(h)}
	}
	for from < len(payload) {
		end := min(from+tagMark, len(payload))
		h.Write(payload[from:end])
		if end-from == tagMark {
			next.marks = append(next.marks, saveHash(h))
		}
		from = end
	}
	next.tag = tagSum(h, len(payload))
	m[agent] = next
	return next.tag
}

// saveHash is h's state (the states of sha256 can be saved and restored).
func saveHash(h hash.Hash) []byte {
	b, err := h.(encoding.BinaryMarshaler).MarshalBinary()
	if err != nil {
		panic(fmt.Sprintf("save the state of sha256: %v", err)) // sha256's states always save
	}
	return b
}

// restoreHash is a sha256 hash in a saved state.
func restoreHash(state []byte) (hash.Hash, error) {
	h := sha256.New()
	if err := h.(encoding.BinaryUnmarshaler).UnmarshalBinary(state); err != nil {
		return nil, fmt.Errorf("restore a sha256 state: %w", err)
	}
	return h, nil
}

// suffixFrom is how many leading bytes of payload an answer can leave
// out for a caller that holds the payload numbered link.extends:
// link.repeats, moved back to the start of a UTF-8 character (the answer
// carries the rest as a string); 0 when the payload extends nothing.
func suffixFrom(link payloadLink, payload []byte) int {
	n := min(link.repeats, len(payload))
	if link.extends == 0 || n <= 0 {
		return 0
	}
	for n > 0 && n < len(payload) && !utf8.RuneStart(payload[n]) {
		n--
	}
	return n
}
