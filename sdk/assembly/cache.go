package assembly

import (
	"sync"

	"github.com/ctxhost/ctxhost/internal/lru"
	"github.com/ctxhost/ctxhost/internal/msgeq"
	"github.com/ctxhost/ctxhost/sdk"
)

// DefaultCacheStreams is how many streams a MessageCache made with
// NewMessageCache(0) keeps.
const DefaultCacheStreams = 64

// MessageCache remembers what an assembler derived from each history
// message — typically the message's encoded fragment of the payload — per
// stream of requests: one session's agent (AssembleRequest.Session and
// Agent.Name). A request whose history repeats the stream's last one and
// appends k messages derives only those k; the payload is then the
// fragments joined. A message is reused when it equals, field for field,
// the message at the same position of the stream's last request (strings
// shared with that request compare without reading their bytes) and every
// message before it is reused too; its context (the tool names it
// resolves, see MessageContext) is checked as well, so the fragments are
// always those a derivation from scratch would give. It keeps the last
// few streams used; it is safe for concurrent use.
//
// A request with ImmutableMessages set (the host's, and those sdk/serve
// rebuilds) is kept by reference instead of copied, and a later one whose
// history shares its array (the same first message) and is at least as
// long is taken as that history with messages appended, without
// comparing a message: a turn that appends k messages then costs O(k),
// not O(history).
type MessageCache[F any] struct {
	streams *lru.Cache[streamKey, *cacheStream[F]]
}

type streamKey struct{ session, agent, format string }

// cacheStream is one stream's last history and what was derived from it.
type cacheStream[F any] struct {
	mu    sync.Mutex
	msgs  []sdk.Message // the last history: a private copy (the structs, not the strings), or the request's own (shared)
	frags []F
	ctx   MessageContext
	// shared: msgs is the request's own slice, given with
	// ImmutableMessages (its capacity is its length, so appending to it
	// copies).
	shared bool
}

// NewMessageCache returns a cache that keeps the last streams streams
// used (DefaultCacheStreams when streams <= 0).
func NewMessageCache[F any](streams int) *MessageCache[F] {
	if streams <= 0 {
		streams = DefaultCacheStreams
	}
	return &MessageCache[F]{streams: lru.New[streamKey, *cacheStream[F]](streams)}
}

// Derive returns one fragment per message of msgs, in order: derive(i, m,
// ctx) for each message not reused from the stream of req (its session,
// agent and format). derive must depend only on the message, its index
// and what ctx answers. The returned slice is read-only (its capacity is
// its length) and append-only across calls: a later call's slice that
// shares its array (the same first fragment) extends it, the fragments
// before unchanged, so a caller may recognise an appended history by
// identity too (see HeadCache). msgs is not kept and may change after the
// call, unless req.ImmutableMessages promises it never does: then it is
// kept by reference, and a later msgs sharing its array and at least as
// long is taken to repeat it.
func (c *MessageCache[F]) Derive(req sdk.AssembleRequest, msgs []sdk.Message, derive func(i int, m sdk.Message, ctx *MessageContext) F) []F {
	st := c.stream(streamKey{req.Session, req.Agent.Name, req.Format})
	st.mu.Lock()
	defer st.mu.Unlock()
	same := 0
	if req.ImmutableMessages && st.shared && sameArray(msgs, st.msgs) {
		same = len(st.msgs) // the kept messages, unchanged by contract
	} else {
		for same < len(msgs) && same < len(st.msgs) && msgeq.Equal(&msgs[same], &st.msgs[same]) {
			same++
		}
	}
	if same < len(st.msgs) || len(st.msgs) == 0 || !st.ctx.extend(msgs[same:], same) {
		st.rebuild(msgs, req.ImmutableMessages, derive)
	} else {
		// Appended (or nothing changed): derive the new messages only.
		for i := same; i < len(msgs); i++ {
			st.frags = append(st.frags, derive(i, msgs[i], &st.ctx))
		}
		st.keep(msgs, same, req.ImmutableMessages)
	}
	return st.frags[:len(st.frags):len(st.frags)]
}

// sameArray reports whether msgs starts where kept does and is at least
// as long.
func sameArray(msgs, kept []sdk.Message) bool {
	return len(kept) > 0 && len(msgs) >= len(kept) && &msgs[0] == &kept[0]
}

// keep records msgs, whose first same messages repeat the kept ones, as
// the stream's history: by reference when immutable, else by appending
// private copies of the new ones.
func (st *cacheStream[F]) keep(msgs []sdk.Message, same int, immutable bool) {
	if immutable {
		st.msgs, st.shared = msgs[:len(msgs):len(msgs)], true
		return
	}
	if st.shared || st.msgs == nil { // never append into the request's array, nor keep what it may change
		st.msgs, st.shared = make([]sdk.Message, 0, len(msgs)+len(msgs)/8+16), false
		same = 0
	}
	for i := same; i < len(msgs); i++ {
		st.msgs = append(st.msgs, msgeq.Own(msgs[i]))
	}
}

// stream returns the stream of key, created (evicting the least recently
// used one when full) if needed.
// Release drops what the cache keeps for session's streams (every agent
// and format).
func (c *MessageCache[F]) Release(session string) {
	c.streams.DeleteFunc(func(k streamKey) bool { return k.session == session })
}

func (c *MessageCache[F]) stream(key streamKey) *cacheStream[F] {
	return c.streams.GetOrAdd(key, func() *cacheStream[F] { return &cacheStream[F]{} })
}

// rebuild derives every message anew. The new fragments are a fresh
// array: fragments returned before stay as they were.
func (st *cacheStream[F]) rebuild(msgs []sdk.Message, immutable bool, derive func(int, sdk.Message, *MessageContext) F) {
	st.frags = make([]F, len(msgs), len(msgs)+len(msgs)/8+16)
	st.ctx = MessageContext{}
	st.ctx.extend(msgs, 0)
	for i, m := range msgs {
		st.frags[i] = derive(i, m, &st.ctx)
	}
	st.msgs, st.shared = nil, false
	st.keep(msgs, 0, immutable)
}

// MessageContext is what a message's fragment may depend on besides the
// message itself: the tool names of the whole history and where each
// call is first made.
type MessageContext struct {
	names          map[string]string // ToolNames of the history
	asked          map[string]bool   // call ids a fragment resolved through names
	first, firstAs map[string]int    // call id -> first message making it (of any role; of the assistant)
}

// extend adds the calls of msgs, which follow from messages already
// there. It reports false when that changes the tool name of a call id a
// fragment already resolved (the fragments must be derived again).
func (x *MessageContext) extend(msgs []sdk.Message, from int) bool {
	if x.names == nil {
		x.names, x.asked = map[string]string{}, map[string]bool{}
		x.first, x.firstAs = map[string]int{}, map[string]int{}
	}
	ok := true
	for k, m := range msgs {
		for _, tc := range m.ToolCalls {
			if tc.ID != "" {
				if old, had := x.names[tc.ID]; x.asked[tc.ID] && (!had || old != tc.Name) {
					ok = false
				}
				x.names[tc.ID] = tc.Name
			}
			if _, had := x.first[tc.ID]; !had {
				x.first[tc.ID] = from + k
			}
			if _, had := x.firstAs[tc.ID]; !had && m.Role == sdk.RoleAssistant {
				x.firstAs[tc.ID] = from + k
			}
		}
	}
	return ok
}

// ToolName is ToolName(m, ToolNames(history)).
func (x *MessageContext) ToolName(m sdk.Message) string {
	if m.ToolName == "" {
		x.asked[m.ToolCallID] = true
	}
	return ToolName(m, x.names)
}

// RenderMessage is RenderMessage(m, ToolNames(history)).
func (x *MessageContext) RenderMessage(m sdk.Message) string {
	if m.Role == sdk.RoleTool && m.ToolName == "" {
		x.asked[m.ToolCallID] = true
	}
	return RenderMessage(m, x.names)
}

// FirstCall returns the index in the history of the first message that
// makes call id, of any role when role is empty (-1 when none does).
func (x *MessageContext) FirstCall(id, role string) int {
	table := x.first
	if role == sdk.RoleAssistant {
		table = x.firstAs
	} else if role != "" {
		panic("assembly: FirstCall by role " + role + ": only the assistant's calls are indexed")
	}
	if i, ok := table[id]; ok {
		return i
	}
	return -1
}
