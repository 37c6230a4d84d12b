package history

import "github.com/ctxhost/ctxhost/sdk"

// ViewEntry is how the view shows one message: whole, or omitted (by the
// window or with the demonstrations), masked, or cut head + tail.
type ViewEntry struct {
	ID      string
	Tokens  int // its tokens as added: changes when the message does
	Omitted bool
	Masked  bool // shown as its placeholder (never when Omitted)
	Cut     bool // shown as head + marker + tail (never when Omitted)
}

// Compacted reports whether the view does not show the message whole.
func (e ViewEntry) Compacted() bool { return e.Omitted || e.Masked || e.Cut }

// EachCompacted calls f, oldest first, for every message up to the last
// one the view omits, masks or cuts (none when it compacts none), with a
// function that returns the original message (loading it back when it
// was moved out of memory). What it reports changes only with the
// view's epoch: the messages appended since come after the last
// compacted one. f must not call the history.
func (h *History) EachCompacted(f func(e ViewEntry, original func() sdk.Message)) {
	h.mu.RLock()
	defer h.mu.RUnlock()
	last := -1
	for i := range h.entries {
		if e := &h.entries[i]; e.hidden || e.masked || e.cut {
			last = i
		}
	}
	for i := 0; i <= last; i++ {
		e := &h.entries[i]
		v := ViewEntry{ID: e.id, Tokens: e.tokens, Omitted: e.hidden, Masked: e.masked && !e.hidden, Cut: e.cut && !e.hidden}
		f(v, func() sdk.Message { return h.message(i) })
	}
}
