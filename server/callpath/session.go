package callpath

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"

	"github.com/ctxhost/ctxhost/engine"
	"github.com/ctxhost/ctxhost/sdk"
)

// deriveSession names the session of a call without a session header:
// the upstream's kind and a digest of the conversation's opening (the
// profile, the system text and the first user message), so that the
// calls of one conversation share a session and conversations with
// different openings never do. Conversations that open alike (the same
// system text and first message) must name their sessions in the header.
func deriveSession(u *upstream, req *request) string {
	h := sha256.New()
	fmt.Fprintf(h, "%s\x00%s\x00%d:%s\x00", u.Name, u.Profile, len(req.system), req.system)
	for i := range req.messages {
		if m := &req.messages[i]; m.Role == sdk.RoleUser {
			writeFingerprint(h, m)
			break
		}
	}
	return u.Kind + "-" + hex.EncodeToString(h.Sum(nil)[:16])
}

// reconcile brings the session's history and system text in line with the
// caller's conversation. The messages the history holds (the same role,
// text, parts, tool calls and tool call ids, in the same order) are
// recognised and the rest appended. When the conversation does not start
// with the whole history (an earlier message edited or removed), the
// history is replaced by the conversation (replaced: true); the session's
// plugin state stays.
func reconcile(es *engine.Session, req *request) (replaced bool, err error) {
	hs := es.Host()
	if req.hasSystem && hs.SystemPrompt() != req.system {
		if err := es.SetSystemPrompt(req.system); err != nil {
			return false, fmt.Errorf("system text: %w", err)
		}
	}
	held := hs.History()
	from := len(held)
	if len(held) > len(req.messages) || !samePrefix(held, req.messages) {
		if err := hs.ClearHistory(); err != nil {
			return false, fmt.Errorf("replace the history: %w", err)
		}
		from, replaced = 0, true
	}
	for i := from; i < len(req.messages); i++ {
		if _, err := es.AddMessage(req.messages[i]); err != nil {
			return replaced, fmt.Errorf("message %d: %w", i, err)
		}
	}
	return replaced, nil
}

// samePrefix reports whether msgs starts with held.
func samePrefix(held, msgs []sdk.Message) bool {
	for i := range held {
		if !sameMessage(&held[i], &msgs[i]) {
			return false
		}
	}
	return true
}

// sameMessage compares what a caller sends of a message: role, text,
// parts, tool calls and the tool call answered (ids, kinds and metadata
// are ctxhost's).
func sameMessage(a, b *sdk.Message) bool {
	if a.Role != b.Role || a.Content != b.Content || a.ToolCallID != b.ToolCallID ||
		len(a.ToolCalls) != len(b.ToolCalls) || len(a.Parts) != len(b.Parts) {
		return false
	}
	for i := range a.ToolCalls {
		x, y := &a.ToolCalls[i], &b.ToolCalls[i]
		if x.ID != y.ID || x.Name != y.Name || x.Arguments != y.Arguments {
			return false
		}
	}
	for i := range a.Parts {
		if !samePart(&a.Parts[i], &b.Parts[i]) {
			return false
		}
	}
	return true
}

func samePart(a, b *sdk.Part) bool {
	return a.Type == b.Type && a.Text == b.Text && a.MediaType == b.MediaType && string(a.Data) == string(b.Data) &&
		a.URL == b.URL && a.Signature == b.Signature && a.Opaque == b.Opaque
}

// writeFingerprint writes what sameMessage compares.
func writeFingerprint(h interface{ Write([]byte) (int, error) }, m *sdk.Message) {
	enc, _ := json.Marshal(struct {
		Role, Content, ToolCallID string
		ToolCalls                 []sdk.ToolCall
		Parts                     []sdk.Part
	}{m.Role, m.Content, m.ToolCallID, m.ToolCalls, m.Parts})
	_, _ = h.Write(enc)
}
