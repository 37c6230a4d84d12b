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

// Inference rules for messages that do not say their kind (Options.Infer).
const (
	// InferOff: a message's kind is its own or its role's (sdk.DefaultKind);
	// the first user message is the task unless Options.DropFirst.
	InferOff = "off"
	// InferChat: the user messages before the first assistant message
	// are the opening: the last of them is the task, the earlier ones
	// instructions (each new one takes the task over while no assistant
	// message has come). Later messages take their role's kind.
	InferChat = "chat"
	// InferAgent: an agent loop. The opening as InferChat, but its
	// earlier user messages are demonstrations (omitted first, as a
	// block); and a user message that follows an assistant message is an
	// observation (what the environment returned to the agent's action),
	// masked like a tool result; every assistant message is an action.
	InferAgent = "agent"
	// InferAuto: the history reads the conversation's shape from its
	// messages (see Shape, ShapeChat, ShapeTools, ShapeAgent) and infers
	// as InferAgent for an agent loop whose observations are user
	// messages, else as InferChat. The decision is revised as the
	// conversation grows; when it changes a kind, every unlabelled
	// message is inferred again and the view is computed again.
	InferAuto = "auto"
)

// InferModes lists the inference rules in a fixed order.
var InferModes = []string{InferAuto, InferOff, InferChat, InferAgent}

// CheckInfer reports an unknown inference rule ("" is InferOff).
func CheckInfer(mode string) error {
	switch mode {
	case "", InferOff, InferChat, InferAgent, InferAuto:
		return nil
	}
	return fmt.Errorf("unknown kind inference %q (want auto, off, chat or agent)", mode)
}

// kindAt resolves the kind of message m at position idx (the next one
// when it is being added): its own, else the inference rule's
// (Options.Infer), else the task for the first user message when no task
// exists yet (unless the first message is not to be kept), or
// DefaultKind.
func (h *History) kindAt(idx int, m *sdk.Message) string {
	if m.Kind != "" {
		return m.Kind
	}
	if mode := h.inferMode(); mode == InferChat || mode == InferAgent {
		return h.inferKind(idx, m, mode)
	}
	if m.Role == sdk.RoleUser && h.opts.KeepFirst && !h.hasTask {
		return sdk.KindTask
	}
	return sdk.DefaultKind(*m)
}

// inferKind is the kind the inference rule mode gives an unlabelled
// message at position idx. A new opening user message takes the task over
// from the last one, which becomes an instruction (chat) or a
// demonstration (agent loop).
func (h *History) inferKind(idx int, m *sdk.Message, mode string) string {
	if m.Role == sdk.RoleUser && h.opening {
		if t := h.openingTask; t >= 0 {
			h.entries[t].kind = kindOf(sdk.KindInstruction)
			if mode == InferAgent {
				h.entries[t].kind = kindOf(sdk.KindDemonstration)
			}
			h.viewChanged()
			return sdk.KindTask
		}
		if !h.hasTask {
			return sdk.KindTask
		}
	}
	if mode == InferAgent {
		switch {
		case m.Role == sdk.RoleAssistant:
			return sdk.KindAction // every model turn of an agent loop acts
		case m.Role == sdk.RoleUser && idx > 0 && h.entries[idx-1].assistant:
			return sdk.KindObservation
		}
	}
	return sdk.DefaultKind(*m)
}

// noteAdded updates what inference remembers of the messages once
// message m at position idx has kind k: whether a task exists, the
// opening and its task, and the current request.
func (h *History) noteAdded(idx int, m *sdk.Message, k string) {
	h.hasTask = h.hasTask || k == sdk.KindTask
	if k == sdk.KindTask && m.Kind == "" && h.opening && h.opts.Infer != InferOff && h.opts.Infer != "" {
		h.openingTask = idx
	}
	if m.Role == sdk.RoleAssistant {
		h.opening = false
	}
	if isRequest(m.Role, k) {
		h.request = idx
	}
}

// isRequest reports whether a message of role and kind says what is
// asked: a user message that is not an environment's output nor a
// demonstration (the task, a person's message, an instruction).
func isRequest(role, k string) bool {
	return role == sdk.RoleUser && k != sdk.KindObservation && k != sdk.KindDemonstration
}

// pinned reports whether entry i may never be masked, cut or omitted.
// The current request (the latest user message that asks something, see
// isRequest) is pinned while it is the latest: the message that says
// what to do now is never masked or omitted.
func (h *History) pinned(i int) bool {
	e := &h.entries[i]
	return e.pinnedMsg || i == h.request || h.opts.Policy[e.kind.name()].Pin
}

// Kind returns the resolved kind of the message with id ("" when unknown).
func (h *History) Kind(id string) string {
	h.mu.RLock()
	defer h.mu.RUnlock()
	if i, ok := h.byID.get(id); ok {
		return h.entries[i].kind.name()
	}
	return ""
}
