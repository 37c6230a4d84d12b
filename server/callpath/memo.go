package callpath

import (
	"bytes"
	"context"
	"encoding/json"
	"hash/maphash"
	"weak"

	"github.com/ctxhost/ctxhost/engine"
	"github.com/ctxhost/ctxhost/internal/jsonprefix"
	"github.com/ctxhost/ctxhost/provider"
	"github.com/ctxhost/ctxhost/sdk"
)

// memo is what the call path remembers of a session's last call, so that
// the next call of the conversation decodes only what is new: an agent
// sends its whole conversation every call, serialised the same way, so
// the last call's conversation array (up to its closing bracket) is the
// next call's first bytes. A call whose array starts with those bytes
// (compared by a hash) has its tail decoded alone; the tail's first
// messages must be the answer recorded last time, the rest is appended.
// Anything else (another process wrote the session, the bytes differ, the
// tail does not start with the recorded answer) takes the whole path:
// every message decoded and compared with the history.
type memo struct {
	prefixLen  int    // bytes of the array before its closing bracket
	prefixHash uint64 // their hash
	turns      int    // the provider's elements in them
	held       int    // history messages they came to
	version    uint64 // the session's stored version after the call
	// headSystem and headHasSystem are the system text the call's head
	// gave (request.headSystem).
	headSystem    string
	headHasSystem bool
	// payload is where the call's payload held its conversation.
	payload payloadLink
}

// payloadLink is where a payload the call path read held its conversation
// array: at byte at, prefix bytes long without its closing bracket. The
// host numbers a session's payloads and says how many leading bytes a
// payload repeats of the last one (Prepared.Extends, Repeats): when they
// cover the last payload's array prefix, the new payload holds the same
// prefix at the same place, delimited and validated already, and is read
// from its end on without hashing or scanning what it repeats. The
// numbers are those of one loaded session (es): a session read again from
// the store numbers its payloads anew.
type payloadLink struct {
	es         weak.Pointer[engine.Session]
	id         uint64
	at, prefix int
}

// known is how many bytes of the array at byte at of the payload prepared
// as p are known from the link (0: none).
func (l payloadLink) known(es *engine.Session, p *engine.Prepared, at int) int {
	if l.id == 0 || l.es.Value() != es || p.Extends != l.id || at != l.at || l.at+l.prefix > p.Repeats {
		return 0
	}
	return l.prefix
}

// memoSize bounds the sessions remembered.
const memoSize = 4096

// tail returns the elements of raw after the remembered prefix, as an
// array (ok: raw starts with the prefix).
//
// known is the known prefix raw was found to start with when it was read
// (its len 0: none): when it is the memo's, its bytes are not hashed
// again.
func (m memo) tail(seed maphash.Seed, raw json.RawMessage, known jsonprefix.Prefix) (json.RawMessage, bool) {
	if m.prefixLen == 0 || len(raw) <= m.prefixLen {
		return nil, false
	}
	if (known.Len != m.prefixLen || known.Hash != m.prefixHash) && maphash.Bytes(seed, raw[:m.prefixLen]) != m.prefixHash {
		return nil, false
	}
	rest := bytes.TrimLeft(raw[m.prefixLen:], " \t\r\n")
	switch {
	case len(rest) > 0 && rest[0] == ']':
		return json.RawMessage("[]"), true
	case len(rest) > 0 && rest[0] == ',' && m.turns > 0:
		out := make([]byte, 0, len(rest))
		return append(append(out, '['), rest[1:]...), true
	}
	return nil, false
}

// reconcile brings the session in line with the call's conversation: by
// its tail when the session's memo applies, else whole (see the package
// reconcile). It sets the request's turns and c.held.
func (c *call) reconcile(ctx context.Context, es *engine.Session) (replaced bool, err error) {
	if c.req.unresolved {
		if err := c.resolveResponses(sessionLookup(c.h.responses, c.session, es), false); err != nil {
			return false, err
		}
		if c.req.after != nil && c.req.after.session != c.session {
			return false, previousNotFound(c.req.previous)
		}
	}
	if c.req.after != nil {
		return c.reconcileAfter(ctx, es)
	}
	// The memo applies to a conversation whose head gives the system text
	// it gave then, and that starts with the bytes it had then: the
	// session's system text is the one they made, and only the system
	// texts of the tail are added to it.
	if m, ok := c.h.memos.Get(c.session); ok && m.version == es.StoredVersion() && m.headSystem == c.req.headSystem && m.headHasSystem == c.req.headHasSystem {
		if tail, ok := m.tail(c.h.seed, c.req.raw, c.req.known); ok {
			if t, err := c.d.conversation(tail, m.turns); err == nil {
				since, held := es.MessagesFrom(m.held)
				since = agentView(since)
				if held >= m.held && startsWith(t.messages, since) {
					if len(t.later) > 0 {
						if err := es.SetSystemPrompt(provider.JoinSystem(es.SystemPrompt(), t.later)); err != nil {
							return false, failf(400, "bad_request", "system text: %v", err)
						}
					}
					for i := len(since); i < len(t.messages); i++ {
						if _, err := es.AddMessage(t.messages[i]); err != nil {
							return false, failf(400, "bad_request", "message %d: %v", m.turns+i, err)
						}
					}
					c.req.turns, c.req.dropped = m.turns+t.turns, t.dropped
					c.held = held + len(t.messages) - len(since)
					return false, nil
				}
			}
		}
	}
	if err := decode(c.d, c.req); err != nil {
		return false, failf(400, "bad_request", "%v", err)
	}
	replaced, err = reconcile(es, c.req, c.edited(ctx))
	if err != nil {
		if isBranching(err) {
			return false, err
		}
		return replaced, failf(400, "bad_request", "%v", err)
	}
	c.held = es.MessageCount()
	return replaced, nil
}

// startsWith reports whether msgs starts with held.
func startsWith(msgs, held []sdk.Message) bool {
	return len(msgs) >= len(held) && samePrefix(held, msgs[:len(held)])
}

// remember keeps the memo of a call that recorded its answer, and its
// conversation's array as a known prefix (hashed on from the known prefix
// it started with).
func (c *call) remember(es *engine.Session) {
	p := jsonprefix.ArrayPrefix(c.req.raw)
	if p == nil || c.req.after != nil { // the conversation is more than its array
		return
	}
	known := c.h.known.Add(p, c.req.known)
	c.h.rememberOpening(c.u, c.req, c.session, c.opening, known)
	if c.req.turns == 0 {
		return
	}
	m := memo{prefixLen: known.Len, prefixHash: known.Hash, turns: c.req.turns, held: c.held, version: es.StoredVersion(),
		headSystem: c.req.headSystem, headHasSystem: c.req.headHasSystem}
	if c.req.payloadPrefix > 0 && c.payloadID != 0 {
		m.payload = payloadLink{es: weak.Make(es), id: c.payloadID, at: c.req.payloadAt, prefix: c.req.payloadPrefix}
	}
	c.h.memos.Put(c.session, m)
}
