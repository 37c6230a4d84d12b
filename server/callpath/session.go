package callpath

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/ctxhost/ctxhost/engine"
	"github.com/ctxhost/ctxhost/internal/jsonprefix"
	"github.com/ctxhost/ctxhost/provider"
	"github.com/ctxhost/ctxhost/sdk"
)

// deriveSession names the session of a call without a session header:
// the upstream's kind and a digest of the conversation's opening as sent
// (the upstream, the profile, the system text, and the conversation's
// elements before the model's first turn), so that the calls of one
// conversation share a session and conversations with different openings
// never do. The opening is every message before the model first speaks,
// not only the first user message: an agent that opens with a
// demonstration or instructions, the same for all its tasks, then its
// task, opens each task differently. Conversations that open alike (the
// same system text and messages) must name their sessions in the header.
func deriveSession(u *upstream, req *request) string {
	id, _ := deriveOpening(u, req)
	return id
}

// deriveOpening is deriveSession, and the bytes of the conversation's
// array it read: through the model's first turn (0 when the array has
// none yet, or the conversation is not an array). A conversation whose
// array starts with the same bytes, at least that many, opens alike.
func deriveOpening(u *upstream, req *request) (string, int) {
	h := sha256.New()
	fmt.Fprintf(h, "%s\x00%s\x00%d:%s\x00", u.Name, u.Profile, len(req.system), req.system)
	end := 0
	dec := json.NewDecoder(bytes.NewReader(req.raw))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('[') {
		h.Write(req.raw) // a string (Responses input)
	} else {
		for dec.More() {
			var el json.RawMessage
			if dec.Decode(&el) != nil {
				break
			}
			var head struct {
				Role string `json:"role"`
				Type string `json:"type"`
			}
			if json.Unmarshal(el, &head) == nil && modelTurn(head.Role, head.Type) {
				end = int(dec.InputOffset())
				break
			}
			h.Write(el)
			h.Write([]byte{0})
		}
	}
	return u.Kind + "-" + hex.EncodeToString(h.Sum(nil)[:16]), end
}

// opening is a session named by its conversation's opening
// (deriveOpening), remembered by the known prefix of the call's array
// (jsonprefix.Prefixes) that holds the opening: the next call of the
// conversation, whose array starts with that prefix, opens alike and is
// in the same session when it is for the same upstream and system text.
// An agent's calls carry no session header: without it each call
// decoded its opening again.
type opening struct {
	len              int // the prefix's length
	end              int // the opening's bytes (deriveOpening), at most len
	upstream, system string
	session          string
}

// openingSession is the session of a call without a session header: the
// one remembered for the known prefix its array starts with, else
// derived from its opening (derived: true; see deriveSession). end is
// the bytes of the array the opening takes (0: the array has no model
// turn yet, or the conversation is no array).
func (h *Handler) openingSession(u *upstream, req *request) (id string, end int, derived bool) {
	if k := req.known; k.Len > 0 {
		if o, ok := h.openings.Get(k.Hash); ok && o.len == k.Len && o.upstream == u.Name && o.system == req.system {
			return o.session, o.end, false
		}
	}
	id, end = deriveOpening(u, req)
	return id, end, true
}

// rememberOpening keeps the session a call derived from its opening (or
// took remembered), by known, the prefix its array is now remembered
// as, when the opening is within it.
func (h *Handler) rememberOpening(u *upstream, req *request, session string, end int, known jsonprefix.Prefix) {
	if end > 0 && end <= known.Len && known.Len > jsonprefix.OpeningBytes {
		h.openings.Put(known.Hash, opening{len: known.Len, end: end, upstream: u.Name, system: req.system, session: session})
	}
}

// modelTurn reports whether a conversation element of role and type is
// the model's: an assistant (Gemini: model) message, or a Responses item
// the model made (a function call, reasoning, ...: any type but a message
// or a tool's output).
func modelTurn(role, typ string) bool {
	switch {
	case role == "assistant" || role == "model":
		return true
	case role == "" && typ != "" && typ != "message":
		return !strings.HasSuffix(typ, "_output")
	}
	return false
}

// reconcile brings the session's history and system text in line with the
// caller's conversation. The messages the history holds (the same role,
// text, parts, tool calls and tool call ids, in the same order) are
// recognised and the rest appended. When the conversation does not start
// with the whole history (an earlier message edited or removed), edited,
// when not nil, is told first (see call.edited): an error from it ends
// the reconcile. Then the history is replaced by the conversation
// (replaced: true); the session's plugin state stays.
func reconcile(es *engine.Session, req *request, edited editedFunc) (replaced bool, err error) {
	if req.hasSystem && es.SystemPrompt() != req.system { // a system text the conversation opens with
		if err := es.SetSystemPrompt(req.system); err != nil {
			return false, fmt.Errorf("system text: %w", err)
		}
	}
	full := es.Messages()
	held := agentView(full) // the turns ctxhost answered itself are not the caller's
	from := len(held)
	if k := commonPrefix(held, req.messages); k < len(held) {
		if edited != nil {
			if err := edited(es, full, k); err != nil {
				return false, err
			}
		}
		if err := es.ClearHistory(); err != nil {
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

// commonPrefix is how many messages held and msgs start with alike.
func commonPrefix(held, msgs []sdk.Message) int {
	n := min(len(held), len(msgs))
	for i := range n {
		if !sameMessage(&held[i], &msgs[i]) {
			return i
		}
	}
	return n
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
// parts, tool calls, the tool call answered and whether the answer is the
// tool's failure (ids, kinds and other metadata are ctxhost's).
func sameMessage(a, b *sdk.Message) bool {
	if a.Role != b.Role || a.Content != b.Content || a.ToolCallID != b.ToolCallID ||
		a.Metadata[sdk.MetaToolError] != b.Metadata[sdk.MetaToolError] || a.Metadata[sdk.MetaResultField] != b.Metadata[sdk.MetaResultField] ||
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

// samePart compares two parts; an opaque part's JSON as a value (the
// held one goes upstream as it first came).
func samePart(a, b *sdk.Part) bool {
	return a.Type == b.Type && a.Text == b.Text && a.MediaType == b.MediaType && string(a.Data) == string(b.Data) &&
		a.URL == b.URL && a.Signature == b.Signature && (a.Opaque == b.Opaque || a.Type == sdk.PartOpaque && provider.SameJSON(a.Opaque, b.Opaque))
}
