package history

import (
	"fmt"

	"github.com/ctxhost/ctxhost/sdk"
)

// AddAll adds msgs in order as Add would, all or none: when one of them is
// invalid (against the history, or against the messages before it in
// msgs) nothing is stored and the error names its index. It returns the
// stored messages.
func (h *History) AddAll(msgs []sdk.Message) ([]sdk.Message, error) {
	h.mu.Lock()
	undo := h.checkpoint()
	h.undo = undo
	defer func() { h.undo = nil }()
	stored := make([]sdk.Message, 0, len(msgs))
	for i, m := range msgs {
		for _, tc := range m.ToolCalls {
			undo.touch(h, tc.ID)
		}
		undo.touch(h, m.ToolCallID)
		s, err := h.add(m)
		if err != nil {
			undo.rollback(h)
			h.mu.Unlock()
			return nil, fmt.Errorf("message %d: %w", i, err)
		}
		stored = append(stored, s)
	}
	h.mu.Unlock()
	for _, m := range msgs {
		in := cloneMessage(m)
		h.record(Op{Kind: OpAdd, Message: &in})
	}
	return stored, nil
}

// batchUndo is what appends change, kept to put it back: readers never
// see the appended entries, since the write lock is held throughout.
type batchUndo struct {
	entries   int
	nextID    int
	version   uint64
	hasTask   bool
	opening   bool
	openTask  int
	openKind  kind // the kind of entry openTask (inference may change it)
	allTokens int
	view      int
	calls     map[string]*callRef // prior value of each touched call (nil: absent)
	request   int
	shape     shapeState
	// saved is the view state before the batch changed it (nil: the
	// batch only appended; see saveView).
	saved *savedView
}

// savedView is the view state of the entries a batch found, kept when an
// add changes it (a shape decided anew, a request released).
type savedView struct {
	entries                             []entry
	frontier, hiddenCount, markerTokens int
	maskCursor, reqFrontier             int
	dropped                             bool
}

// saveView keeps the view state for the AddAll batch in progress before
// an add changes it (once per batch). The caller holds h.mu.
func (h *History) saveView() {
	u := h.undo
	if u == nil || u.saved != nil {
		return
	}
	u.saved = &savedView{entries: append([]entry(nil), h.entries[:u.entries]...), frontier: h.frontier,
		hiddenCount: h.hiddenCount, markerTokens: h.markerTokens, maskCursor: h.maskCursor, reqFrontier: h.reqFrontier, dropped: h.dropped}
}

func (h *History) checkpoint() *batchUndo {
	u := &batchUndo{entries: len(h.entries), nextID: h.nextID, version: h.version, hasTask: h.hasTask,
		opening: h.opening, openTask: h.openingTask, allTokens: h.allTokens, view: h.viewTokens, calls: map[string]*callRef{},
		request: h.request, shape: h.shape}
	if u.openTask >= 0 {
		u.openKind = h.entries[u.openTask].kind
	}
	return u
}

// touch remembers call id's record before the batch changes it.
func (u *batchUndo) touch(h *History, id string) {
	if _, seen := u.calls[id]; seen || id == "" {
		return
	}
	if ref, ok := h.calls[id]; ok {
		u.calls[id] = &ref
	} else {
		u.calls[id] = nil
	}
}

func (u *batchUndo) rollback(h *History) {
	for _, e := range h.entries[u.entries:] {
		h.byID.del(e.id)
	}
	clear(h.entries[u.entries:])
	h.entries = h.entries[:u.entries]
	for id, ref := range u.calls {
		if ref == nil {
			delete(h.calls, id)
		} else {
			h.calls[id] = *ref
		}
	}
	h.nextID, h.version, h.hasTask, h.allTokens, h.viewTokens = u.nextID, u.version, u.hasTask, u.allTokens, u.view
	h.opening, h.openingTask, h.request, h.shape = u.opening, u.openTask, u.request, u.shape
	if v := u.saved; v != nil {
		copy(h.entries, v.entries)                                                            // a message spilled since is still in the memory the saved entry points to
		h.frontier, h.hiddenCount, h.markerTokens = v.frontier, v.hiddenCount, v.markerTokens // the view's tokens: u.view
		h.maskCursor, h.dropped, h.reqFrontier = v.maskCursor, v.dropped, v.reqFrontier
		h.viewChanged()
		return
	}
	if u.openTask >= 0 && h.entries[u.openTask].kind != u.openKind {
		h.entries[u.openTask].kind = u.openKind
		h.viewChanged()
	}
}
