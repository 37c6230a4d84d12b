package history

import (
	"fmt"
	"sort"

	"github.com/ctxhost/ctxhost/sdk"
)

// KindRule says what compaction may do with the messages of one kind.
type KindRule struct {
	// Mask: the message may be replaced by a descriptive placeholder
	// (its id keeps the original retrievable).
	Mask bool
	// Pin: the message is never masked, cut or omitted.
	Pin bool
	// DropFirst: the kind's messages are omitted as one block before
	// anything else is masked or omitted.
	DropFirst bool
}

// Policy maps a message kind to its rule. Kinds not in the map may only be
// omitted by the sliding window (and cut as a last resort).
type Policy map[string]KindRule

// DefaultPolicy returns the default rules: observations are masked
// whatever role carried them, demonstrations go first, the task is
// pinned.
func DefaultPolicy() Policy {
	return Policy{
		sdk.KindObservation:   {Mask: true},
		sdk.KindDemonstration: {DropFirst: true},
		sdk.KindTask:          {Pin: true},
	}
}

// Check reports an unknown kind or a rule that contradicts itself.
func (p Policy) Check() error {
	kinds := make([]string, 0, len(p))
	for k := range p {
		kinds = append(kinds, k)
	}
	sort.Strings(kinds)
	for _, k := range kinds {
		if k == "" || !sdk.ValidKind(k) {
			return fmt.Errorf("history policy: %w", sdk.CheckKind(k))
		}
		r := p[k]
		if r.Pin && (r.Mask || r.DropFirst) {
			return fmt.Errorf("history policy for kind %q: a pinned kind cannot also be masked or dropped", k)
		}
	}
	return nil
}

// withDefaults returns p with the default rule for every kind p leaves
// out (nil p: the defaults).
func (p Policy) withDefaults() Policy {
	out := DefaultPolicy()
	for k, r := range p {
		out[k] = r
	}
	return out
}

// kindOf resolves the kind of a message being added: its own, or the task
// for the first user message when no task exists yet (unless the first
// message is not to be kept), or DefaultKind.
func (h *History) kindOf(m *sdk.Message) string {
	if m.Kind != "" {
		return m.Kind
	}
	if m.Role == sdk.RoleUser && h.opts.KeepFirst && !h.hasTask {
		return sdk.KindTask
	}
	return sdk.DefaultKind(*m)
}

// pinned reports whether entry i may never be masked, cut or omitted.
func (h *History) pinned(i int) bool {
	e := &h.entries[i]
	return e.msg.Pinned || h.opts.Policy[e.kind].Pin
}

// Kind returns the resolved kind of the message with id ("" when unknown).
func (h *History) Kind(id string) string {
	h.mu.RLock()
	defer h.mu.RUnlock()
	if i, ok := h.byID[id]; ok {
		return h.entries[i].kind
	}
	return ""
}
