package server

import (
	"crypto/sha256"
	"encoding/hex"
	"strconv"
)

// payloadTag identifies a payload's bytes, media type and system text: a
// SHA-256 over their lengths and bytes, hex, 32 characters. Equal tags,
// equal payloads.
func payloadTag(payload []byte, mediaType, system string, hasSystem bool) string {
	h := sha256.New()
	var buf []byte
	for _, part := range [][]byte{[]byte(mediaType), []byte(system), payload} {
		buf = strconv.AppendInt(buf[:0], int64(len(part)), 10)
		buf = append(buf, ':')
		h.Write(buf)
		h.Write(part)
	}
	if hasSystem {
		h.Write([]byte{1})
	}
	sum := h.Sum(nil)
	return hex.EncodeToString(sum[:16])
}

// tagMemo remembers the tag of the last payload of each agent of a
// session, by the identity of its bytes: a repeated turn resends the very
// same payload slice, so its tag is not hashed again.
type tagMemo map[string]taggedPayload

type taggedPayload struct {
	data      *byte // the payload's first byte
	size      int
	mediaType string
	system    string
	hasSystem bool
	tag       string
}

// tag returns the payload's tag, hashing it only when it is not the
// slice last tagged for agent.
func (m tagMemo) tag(agent string, payload []byte, mediaType, system string, hasSystem bool) string {
	var data *byte
	if len(payload) > 0 {
		data = &payload[0]
	}
	next := taggedPayload{data: data, size: len(payload), mediaType: mediaType, system: system, hasSystem: hasSystem}
	if last, ok := m[agent]; ok && data != nil {
		if next.tag = last.tag; last == next {
			return last.tag
		}
	}
	next.tag = payloadTag(payload, mediaType, system, hasSystem)
	m[agent] = next
	return next.tag
}
