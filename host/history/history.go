// Package history is the built-in conversation history of a session: it
// validates and stores messages, counts each one once, and keeps a
// compacted view of them without ever deleting a message. What the view
// may do with a message is decided by its kind (task, demonstration,
// observation, ...), not its role: demonstrations are omitted first, as a
// block; observations are masked by descriptive placeholders; then a
// sliding window omits the oldest messages behind one marker; and as a
// last resort an oversized message is cut head + tail. The task and pinned
// messages are never masked or omitted.
//
// A History has its own RWMutex and is safe for concurrent use: readers
// (All, View, ViewTokens, Get, ...) run in parallel; Add, Compact and the
// other writers are serialized. Add counts the new message under the write
// lock.
package history

import (
	"fmt"
	"iter"
	"sync"

	"github.com/ctxhost/ctxhost/sdk"
	"github.com/ctxhost/ctxhost/tokenizer"
)

// Defaults for Options fields left zero.
const (
	DefaultPreserveRecent = 5
	DefaultMaskBatch      = 3
)

// Options configures compaction. Zero fields take their defaults, so
// Options{} is DefaultOptions().
type Options struct {
	// PreserveRecent is how many of the most recent turns compaction
	// never masks or omits (default 5; a negative value preserves none).
	// A turn is a user message, or an assistant message with the tool
	// results (or the observation sent as a user message) answering it.
	PreserveRecent int
	// KeepFirst makes the first user message the task when no message
	// says it is one (the task is never omitted, see Policy). It is on by
	// default, and false is read as the default: set DropFirst to turn it
	// off.
	KeepFirst bool
	// DropFirst turns KeepFirst off: no message becomes the task unless
	// its kind says so.
	DropFirst bool
	// MaskBatch is how many observations Compact masks between checks of
	// the need, and how many MaskOldest masks when asked for n <= 0
	// (default 3).
	MaskBatch int
	// Policy says what compaction may do with each message kind; kinds it
	// leaves out take DefaultPolicy's rule.
	Policy Policy
	// Infer is how kinds are inferred for messages that do not say theirs
	// (see InferAuto, InferOff, InferChat, InferAgent; empty: InferOff).
	Infer string
	// Framing, when set, counts messages as the provider frames them
	// (content, name and tool calls plus overheads) instead of as
	// sdk.MessageText.
	Framing *sdk.Framing
	// Digest, when set, is what a masked message's placeholder ends
	// with: the facts it stated, which stay in view once it is masked.
	// It must be deterministic; the placeholder stays a prefix.
	Digest func(sdk.Message) string
}

// DefaultOptions returns the defaults: preserve 5 turns, keep the task, mask
// in batches of 3, DefaultPolicy.
func DefaultOptions() Options {
	return Options{PreserveRecent: DefaultPreserveRecent, KeepFirst: true, MaskBatch: DefaultMaskBatch, Policy: DefaultPolicy()}
}

// withDefaults resolves zero fields.
func (o Options) withDefaults() Options {
	if o.PreserveRecent == 0 {
		o.PreserveRecent = DefaultPreserveRecent
	} else if o.PreserveRecent < 0 {
		o.PreserveRecent = 0
	}
	if o.MaskBatch <= 0 {
		o.MaskBatch = DefaultMaskBatch
	}
	o.KeepFirst = !o.DropFirst
	o.Policy = o.Policy.withDefaults()
	return o
}

// entry is one stored message with its cached counts. It is kept small:
// a long session holds one per message, most of them omitted and spilled
// (see spill.go).
type entry struct {
	msg *sdk.Message // nil while spilled (omitted messages only: see spillOut)
	// shown is how the view shows a masked, cut or stripped message; nil
	// until one of them is computed, and dropped when the message is
	// omitted unless it is cut (its cut content is part of the state).
	shown     *shownAs
	id        string // msg.ID
	tokens    int    // tokens of msg (History.count)
	refOff    int64  // where msg was spilled, and its length
	refLen    int32
	caller    int32 // tool turn: index of the assistant entry it answers; else -1
	kind      kind  // resolved kind
	masked    bool  // the view shows the placeholder
	hidden    bool  // omitted from the view (window or dropped block)
	cut       bool  // the view shows cutContent
	stripped  bool  // the view shows stripParts: images and documents as placeholders, thinking left out
	pinnedMsg bool  // msg.Pinned
	assistant bool  // msg.Role is assistant
	user      bool  // msg.Role is user
	// chain digests the messages up to this one (see chainOf).
	chain uint64
}

// shownAs holds what the view shows of an entry that is not shown as
// added.
type shownAs struct {
	maskTokens  int    // tokens of the masked message; -1 until counted
	maskContent string // the placeholder, set with maskTokens
	cutContent  string // head + marker + tail
	cutTokens   int    // tokens of the cut message
	stripParts  []sdk.Part
	stripTokens int
}

// shownOf returns entry e's shownAs, making it.
func shownOf(e *entry) *shownAs {
	if e.shown == nil {
		e.shown = &shownAs{maskTokens: -1}
	}
	return e.shown
}

// callRef locates one tool call (its tool's name is in the call: see
// callName).
type callRef struct {
	entry    int32 // index of the assistant entry that made the call
	answered bool
}

// History is a session's conversation history and its compacted view.
// Create one with New.
type History struct {
	mu      sync.RWMutex
	counter tokenizer.Counter
	opts    Options

	entries []entry
	byID    messageIDs         // message id -> index
	calls   map[string]callRef // tool call id -> call
	nextID  int                // last number used for an "mN" id; never reset
	version uint64
	epoch   uint64 // the view's epoch (see Shared): changes with every change but an append
	hasTask bool   // a message of kind task was added
	// opening is true until the first assistant message: the user
	// messages before it are the opening (see InferChat); openingTask is
	// the index of the opening's inferred task (-1: none).
	opening     bool
	openingTask int
	// request is the index of the current request: the latest user
	// message that asks something (see isRequest), pinned while it is the
	// latest; -1: none.
	request int
	// shape is InferAuto's reading of the conversation (see shape.go).
	shape shapeState
	// undo is the AddAll batch in progress (nil: none): a change of the
	// view state an add makes is saved to it first (see saveView).
	undo *batchUndo
	// allTokens is the sum of every entry's tokens (the history unmanaged).
	allTokens int
	// shared caches Shared and DropFirstTokens (see shared.go).
	shared sharedCache

	// View state (see view.go).
	frontier int // the window has passed entries [0, frontier): all but pinned and held ones are hidden
	// reqFrontier: the earlier requests from it on are held (see held):
	// the window passes them without omitting them; those before it, and
	// before frontier, are omitted. reqFrontier <= frontier.
	reqFrontier  int
	dropped      bool // the DropFirst kinds were omitted as a block
	hiddenCount  int  // hidden entries
	markerTokens int  // tokens of the omission marker, 0 when nothing is omitted
	viewTokens   int  // tokens of View()
	maskCursor   int  // entries before it are never mask candidates
	// summary is the summary shown in the marker's place (nil: none);
	// pending one taken for a span the window has not passed yet.
	summary, pending *Summary
	// withdrawn: the shown summary gave way to the plain omission marker
	// when the view had to cut a message (see cutView), until the next
	// summary is shown.
	withdrawn bool
	// outputs are the summaries of large outputs, by id: a summarized
	// output is masked as its summary (see outputsummary.go).
	outputs map[string]*OutputSummary

	journal func(Op) // told every change (see SetJournal); nil: none

	// Omitted messages out of memory (see spill.go).
	spill    *spillFile // nil until the first message is spilled
	noSpill  bool       // no spill file could be made or written: keep every message
	spilling []int      // entries spilled since the last flushSpill
}

// New returns an empty History that counts with counter.
func New(counter tokenizer.Counter, opts Options) *History {
	h := &History{counter: counter, opts: opts.withDefaults()}
	h.reset()
	return h
}

// reset empties messages and view state; the id counter is kept.
func (h *History) reset() {
	h.entries = nil
	h.spill, h.spilling = nil, nil // the file closes once unreachable
	h.byID = newMessageIDs()
	h.calls = map[string]callRef{}
	h.hasTask = false
	h.opening, h.openingTask, h.request = true, -1, -1
	h.shape = shapeState{shape: ShapeChat, why: "no messages yet"}
	h.allTokens = 0
	h.outputs = nil
	h.resetView()
	h.viewChanged()
}

// Options returns the resolved options.
func (h *History) Options() Options { return h.opts }

// Add validates m, assigns its id ("m1", "m2", ... unless the caller gave
// a unique one), fills a tool turn's tool_name from its call, counts it
// once and appends it. It returns the stored message. On error nothing is
// stored; the error says what is wrong.
func (h *History) Add(m sdk.Message) (sdk.Message, error) {
	h.mu.Lock()
	stored, err := h.add(m)
	h.mu.Unlock()
	if err == nil {
		in := cloneMessage(m)
		h.record(Op{Kind: OpAdd, Message: &in})
	}
	return stored, err
}

func (h *History) add(m sdk.Message) (sdk.Message, error) {
	m = sdk.NormalizeParts(cloneMessage(m))
	caller, err := h.validate(&m)
	if err != nil {
		return sdk.Message{}, err
	}
	if m.ID == "" {
		m.ID = h.newID()
	}
	idx := len(h.entries)
	if h.opts.Infer == InferAuto {
		h.observeShape(&m)
	}
	kind := h.kindAt(idx, &m)
	prevRequest := h.request
	h.noteAdded(idx, &m, kind)
	for _, tc := range m.ToolCalls {
		h.calls[tc.ID] = callRef{entry: int32(idx)}
	}
	if m.Role == sdk.RoleTool {
		ref := h.calls[m.ToolCallID]
		ref.answered = true
		h.calls[m.ToolCallID] = ref
	}
	var prev uint64
	if idx > 0 {
		prev = h.entries[idx-1].chain
	}
	e := entry{msg: &m, id: m.ID, kind: kindOf(kind), tokens: h.count(m), caller: int32(caller),
		pinnedMsg: m.Pinned, assistant: m.Role == sdk.RoleAssistant, user: m.Role == sdk.RoleUser, chain: chainOf(prev, &m)}
	h.entries = append(h.entries, e)
	h.byID.put(m.ID, idx)
	h.viewTokens += e.tokens
	h.allTokens += e.tokens
	h.version++ // an append: the view's epoch stays
	if prevRequest >= 0 && h.request != prevRequest {
		h.releaseRequest(prevRequest)
	}
	return cloneMessage(m), nil
}

// releaseRequest is called when a newer request takes over from the
// message at i: it is no longer pinned, and when the window has passed it
// (it stayed shown only as the request) it is omitted now, as the window
// would have done, so that the messages shown before the window's frontier
// are always the pinned ones.
func (h *History) releaseRequest(i int) {
	e := &h.entries[i]
	if i >= h.frontier || e.hidden || h.pinned(i) || h.held(i) {
		return
	}
	h.saveView()
	h.hide(i)
	h.flushSpill()
	h.hiddenCount++
	h.recountView()
	h.viewChanged()
}

// newID returns the next unused "mN" id.
func (h *History) newID() string {
	for {
		h.nextID++
		id := fmt.Sprintf("m%d", h.nextID)
		if _, taken := h.byID.get(id); !taken {
			return id
		}
	}
}

// All returns every message, masked and omitted ones included, as added.
func (h *History) All() []sdk.Message {
	h.mu.RLock()
	defer h.mu.RUnlock()
	return h.messages(0)
}

// Recent returns the last n messages (all of them when n exceeds Len; none
// when n <= 0).
func (h *History) Recent(n int) []sdk.Message {
	h.mu.RLock()
	defer h.mu.RUnlock()
	if n <= 0 {
		return []sdk.Message{}
	}
	return h.messages(max(0, len(h.entries)-n))
}

// From returns the messages at positions from on (none when from is
// Len or more) and how many messages there are in all.
func (h *History) From(from int) ([]sdk.Message, int) {
	h.mu.RLock()
	defer h.mu.RUnlock()
	return h.messages(min(max(from, 0), len(h.entries))), len(h.entries)
}

func (h *History) messages(from int) []sdk.Message {
	out := make([]sdk.Message, 0, len(h.entries)-from)
	for i := from; i < len(h.entries); i++ {
		out = append(out, cloneMessage(h.message(i)))
	}
	return out
}

// Get returns the original message with id, masked or omitted or not.
func (h *History) Get(id string) (sdk.Message, bool) {
	h.mu.RLock()
	defer h.mu.RUnlock()
	i, ok := h.byID.get(id)
	if !ok {
		return sdk.Message{}, false
	}
	return cloneMessage(h.message(i)), true
}

// Len returns the number of messages.
func (h *History) Len() int {
	h.mu.RLock()
	defer h.mu.RUnlock()
	return len(h.entries)
}

// Epoch is the view's epoch (see Shared): it changes with every change of
// the view but an append.
func (h *History) Epoch() uint64 {
	h.mu.RLock()
	defer h.mu.RUnlock()
	return h.epoch
}

// Version changes whenever the messages or the view change, so a caller
// can reuse what it built from View() while Version is unchanged.
func (h *History) Version() uint64 {
	h.mu.RLock()
	defer h.mu.RUnlock()
	return h.version
}

// Clear removes every message and resets the view. Message ids keep
// counting (an id is never reused), and tool call ids may be used again.
func (h *History) Clear() {
	h.mu.Lock()
	h.reset()
	h.mu.Unlock()
	h.record(Op{Kind: OpClear})
}

// SetCounter switches the encoding and recounts every message once. It
// does nothing when counter has the current encoding's name.
func (h *History) SetCounter(c tokenizer.Counter) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if c.Name() == h.counter.Name() {
		return
	}
	h.counter = c
	h.maskCursor = 0 // whether masking shrinks an output may change
	h.allTokens = 0
	for i := range h.entries {
		e := &h.entries[i]
		e.tokens = h.count(h.message(i))
		h.allTokens += e.tokens
		if s := h.outputs[e.id]; s != nil {
			s.Tokens = e.tokens
		}
		if e.shown != nil {
			e.shown.maskTokens = -1
		}
		if e.masked && !e.hidden { // an omitted message's placeholder is never shown
			h.maskTokensOf(i)
		}
		if e.cut {
			e.shown.cutTokens = h.count(h.cutMessage(i))
		}
	}
	h.recountView()
	h.viewChanged()
}

// Count is the token count of m as the history counts its messages
// (framed when Options.Framing is set), whether or not m is in it.
func (h *History) Count(m sdk.Message) int { return h.count(m) }

// Backward yields every message newest first, without copying the
// history: the caller must not modify what it is given, nor call the
// history while iterating.
func (h *History) Backward() iter.Seq[sdk.Message] {
	return func(yield func(sdk.Message) bool) {
		h.mu.RLock()
		defer h.mu.RUnlock()
		for i := len(h.entries) - 1; i >= 0; i-- {
			if !yield(h.message(i)) {
				return
			}
		}
	}
}

// count is the token count of one message: framed when a Framing is set,
// else its sdk.MessageText.
func (h *History) count(m sdk.Message) int {
	if f := h.opts.Framing; f != nil {
		return f.MessageTokens(h.counter.Count, m)
	}
	return sdk.CountMessage(h.counter, m)
}

// cloneMessage copies m's tool calls and metadata so the caller and the
// History never share them.
func cloneMessage(m sdk.Message) sdk.Message {
	if m.ToolCalls != nil {
		m.ToolCalls = append([]sdk.ToolCall(nil), m.ToolCalls...)
	}
	if m.Parts != nil {
		m.Parts = append([]sdk.Part(nil), m.Parts...)
	}
	if m.Metadata != nil {
		md := make(map[string]string, len(m.Metadata))
		for k, v := range m.Metadata {
			md[k] = v
		}
		m.Metadata = md
	}
	return m
}

// PreserveRecent is how many of the most recent turns compaction never
// touches (Options.PreserveRecent with its default resolved).
func (h *History) PreserveRecent() int { return h.opts.PreserveRecent }
