package history

import (
	"sync"
	"sync/atomic"

	"github.com/ctxhost/ctxhost/sdk"
)

// Shared is the compacted view as a caller that only reads it may keep
// it: the same messages as View, with their counts. It is built once per
// view state and extended in place when messages are only appended, so
// a turn that adds k messages costs O(k), not a copy of the history.
type Shared struct {
	// Messages is View(), read-only: it is shared with the History and
	// with every caller given it. Its capacity is its length, so an
	// append by a holder copies it.
	Messages []sdk.Message
	// Tokens holds the tokens of each message of Messages (ViewCounts'
	// each), read-only too.
	Tokens []int
	// Total is ViewTokens; Unmanaged is the tokens of every message as
	// added (ViewCounts' all).
	Total, Unmanaged int
	// Epoch names the view state, across every History: it changes
	// whenever the view changes other than by appending messages (a mask,
	// omission, cut, reset, clear, restore or a new encoding). Two Shared
	// with the same Epoch agree on every message the shorter one holds.
	Epoch uint64
}

// epochs hands out view epochs, unique in the process.
var epochs atomic.Uint64

func nextEpoch() uint64 { return epochs.Add(1) }

// viewChanged marks a change of the messages or the view that is not an
// append: Version and the view's epoch both change.
func (h *History) viewChanged() {
	h.version++
	h.epoch = nextEpoch()
}

// sharedCache is the Shared view of one epoch, covering the entries
// [0, covered); dropFirst memoizes DropFirstTokens the same way.
type sharedCache struct {
	mu        sync.Mutex // guards the cache (readers of h hold only h.mu's read lock)
	epoch     uint64
	covered   int
	msgs      []sdk.Message
	each      []int
	dropEpoch uint64
	dropTo    int
	dropSum   int
}

// Shared returns the view as Shared: built again after a change of the
// view, extended by the messages added since otherwise.
func (h *History) Shared() Shared {
	h.mu.RLock()
	defer h.mu.RUnlock()
	c := &h.shared
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.epoch != h.epoch || !h.shownAsAdded(c.covered) {
		h.rebuildShared(c)
	}
	for i := c.covered; i < len(h.entries); i++ {
		c.msgs = append(c.msgs, cloneMessage(h.message(i)))
		c.each = append(c.each, h.entries[i].tokens)
	}
	c.covered = len(h.entries)
	n := len(c.msgs)
	return Shared{Messages: c.msgs[:n:n], Tokens: c.each[:n:n], Total: h.viewTokens, Unmanaged: h.allTokens, Epoch: h.epoch}
}

// shownAsAdded reports whether the entries from on are shown as added
// (not hidden, masked or cut): what an append leaves behind.
func (h *History) shownAsAdded(from int) bool {
	for i := from; i < len(h.entries); i++ {
		if e := &h.entries[i]; e.hidden || e.masked || e.cut || e.stripped {
			return false
		}
	}
	return true
}

// rebuildShared fills c with the whole view of the current epoch.
func (h *History) rebuildShared(c *sharedCache) {
	c.epoch, c.covered = h.epoch, len(h.entries)
	n := len(h.entries) - h.hiddenCount + 1
	c.msgs = make([]sdk.Message, 0, n+n/8+16) // room for the next appends
	c.each = make([]int, 0, cap(c.msgs))
	h.eachShown(func(m sdk.Message, tokens int) {
		c.msgs = append(c.msgs, m)
		c.each = append(c.each, tokens)
	})
}

// dropFirstTokens is DropFirstTokens under h.mu's read lock: remembered
// per epoch and extended by the messages added since.
func (h *History) dropFirstTokens() int {
	if h.dropped {
		return 0
	}
	c := &h.shared
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.dropEpoch != h.epoch || !h.shownAsAdded(c.dropTo) {
		c.dropEpoch, c.dropTo, c.dropSum = h.epoch, 0, 0
	}
	for i := c.dropTo; i < len(h.entries); i++ {
		if e := &h.entries[i]; !e.hidden && !h.pinned(i) && h.opts.Policy[e.kind.name()].DropFirst {
			c.dropSum += h.effTokens(i)
		}
	}
	c.dropTo = len(h.entries)
	return c.dropSum
}
