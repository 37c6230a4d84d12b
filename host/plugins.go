package host

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/ctxhost/ctxhost/sdk"
	"github.com/ctxhost/ctxhost/tokenizer"
)

// boundPlugin is one plugin binding of one session, with the last answer the
// host accepted from it.
type boundPlugin struct {
	binding     PluginBinding
	info        sdk.PluginInfo
	priority    int
	compactable bool
	slot        sdk.Slot

	// fresh: the plugin's state has not changed since last was fetched
	// (nothing applied, compacted or restored), so the Component call can
	// be skipped unless the plugin is volatile.
	fresh      bool
	last       *sdk.Component // nil: the plugin had nothing
	lastCounts map[string]int // tokens of each section or message text of last
	lastTokens int
	lastGen    int // the plugin's generation when last was fetched
	// hooked: the Prepared hook ran after last was fetched. A plugin with
	// sdk.CapPreparedOnChange that is hooked and fresh is not called.
	hooked bool
}

// Generationer is implemented by a ContextPlugin that can be replaced under
// the host (a Supervisor): the generation changes on every relaunch, so the
// host never reuses an answer from a previous instance.
type Generationer interface {
	Generation() int
}

func generationOf(p ContextPlugin) int {
	if g, ok := p.(Generationer); ok {
		return g.Generation()
	}
	return 0
}

func newBoundPlugin(b PluginBinding) (*boundPlugin, error) {
	info := b.Plugin.Info()
	p := &boundPlugin{binding: b, info: info, priority: info.Priority, compactable: info.Compactable, slot: info.Slot}
	if b.Priority != nil {
		p.priority = *b.Priority
	}
	if b.Compactable != nil {
		p.compactable = *b.Compactable
	}
	if p.slot == "" {
		p.slot = sdk.SlotContext
	}
	if IsCoreComponent(b.Name) {
		return nil, fmt.Errorf("plugin %q: the name is taken by a component of the host (%s)", b.Name, strings.Join(CoreComponents, ", "))
	}
	if p.priority < 0 || p.priority > 100 {
		return nil, fmt.Errorf("plugin %q: priority must be 0..100, got %d", b.Name, p.priority)
	}
	if !p.slot.ForPlugins() {
		return nil, fmt.Errorf("plugin %q: unknown slot %q", b.Name, p.slot)
	}
	return p, nil
}

// CoreComponents are the names of the components the host itself builds;
// a plugin binding cannot use them, since its component is named after it.
var CoreComponents = []string{sdk.ComponentSystemPrompt, sdk.ComponentInstructions, sdk.ComponentHistory,
	sdk.ComponentInput, sdk.ComponentTeamTask, sdk.ComponentTools}

// IsCoreComponent reports whether name is one of CoreComponents.
func IsCoreComponent(name string) bool { return slices.Contains(CoreComponents, name) }

// reusable reports whether the last answer can be used without a call.
func (p *boundPlugin) reusable() bool {
	return p.fresh && !p.info.HasCapability(sdk.CapVolatile) && p.lastGen == generationOf(p.binding.Plugin)
}

// callWithDeadline runs fn with a deadline of timeout and returns when fn
// does or when the deadline passes, whichever is first, so a plugin that
// ignores its context cannot hang the host.
func callWithDeadline[T any](ctx context.Context, timeout time.Duration, fn func(context.Context) (T, error)) (T, error) {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	type result struct {
		v   T
		err error
	}
	ch := make(chan result, 1)
	go func() {
		v, err := fn(ctx)
		ch <- result{v, err}
	}()
	select {
	case r := <-ch:
		if deadline, _ := ctx.Deadline(); r.err != nil && (ctx.Err() != nil || !time.Now().Before(deadline)) {
			// The call failed because its deadline passed. A transport
			// reports that its own way (gRPC sends the deadline along and
			// the server may cancel the stream a moment before our own
			// timer fires): say so.
			why := ctx.Err()
			if why == nil {
				why = context.DeadlineExceeded
			}
			return r.v, fmt.Errorf("cut off after %s: %w (%v)", timeout, why, r.err)
		}
		return r.v, r.err
	case <-ctx.Done():
		var zero T
		return zero, fmt.Errorf("cut off after %s: %w", timeout, ctx.Err())
	}
}

// fetched is a validated component with its token count (comp nil: the
// plugin had nothing).
type fetched struct {
	comp   *sdk.Component
	tokens int
	counts map[string]int // tokens of each section or message text of comp
}

// fetch asks the plugin for its component, validates and counts it, all
// within the binding's deadline (counting a huge component is part of the
// call's time); a call cut off by that deadline is made once more, and
// cutOff is then the first attempt's error. It does not touch the slot.
func (p *boundPlugin) fetch(ctx context.Context, session, encoding string, counter tokenizer.Counter) (f fetched, gen int, cutOff, err error) {
	gen = generationOf(p.binding.Plugin)
	prev := p.lastCounts
	f, cutOff, err = callRetryingOnce(ctx, p.binding.Timeout, func(ctx context.Context) (fetched, error) {
		c, err := p.binding.Plugin.Component(ctx, session, encoding)
		if err != nil || c == nil {
			return fetched{}, err
		}
		if n, limit := componentBytes(c), p.binding.MaxComponentBytes; n > limit {
			return fetched{}, fmt.Errorf("invalid component: %d bytes, over the limit of %d (max_component_bytes)", n, limit)
		}
		out := *c
		// The host decides the name, priority and compactable flag: the
		// component is named after its binding, so one binary can be bound
		// under several names (the SDK documents the plugin's values as
		// ignored and the conformance kit rejects them).
		out.Name = p.binding.Name
		if err := ValidateComponent(&out); err != nil {
			return fetched{}, fmt.Errorf("invalid component: %w", err)
		}
		out.Priority, out.Compactable = p.priority, p.compactable
		if out.Slot == "" {
			out.Slot = p.slot
		}
		n, counts := countComponent(counter, &out, prev)
		return fetched{comp: &out, tokens: n, counts: counts}, nil
	})
	return f, gen, cutOff, err
}

// componentBytes is the size of what c carries: text, messages (their
// parts included) and metadata.
func componentBytes(c *sdk.Component) int {
	n := len(c.Name) + len(c.Text)
	for _, m := range c.Messages {
		n += len(m.Role) + len(m.Name) + len(m.Content) + len(m.ToolCallID) + len(m.ToolName)
		for _, p := range m.Parts {
			n += len(p.Type) + len(p.Text) + len(p.MediaType) + len(p.Data) + len(p.URL) + len(p.Title) + len(p.Signature) + len(p.Opaque)
		}
		for _, tc := range m.ToolCalls {
			n += len(tc.ID) + len(tc.Name) + len(tc.Arguments)
		}
	}
	for k, v := range c.Metadata {
		n += len(k) + len(v)
	}
	return n
}

// ValidateComponent rejects a plugin's nonsense component: an empty name,
// an unknown slot, invalid UTF-8 anywhere.
func ValidateComponent(c *sdk.Component) error {
	if c.Name == "" {
		return fmt.Errorf("empty name")
	}
	if c.Slot != "" && !c.Slot.ForPlugins() {
		return fmt.Errorf("%q: unknown slot %q", c.Name, c.Slot)
	}
	bad := func(what string) error { return fmt.Errorf("%q: %s is not valid UTF-8", c.Name, what) }
	if !utf8.ValidString(c.Name) {
		return fmt.Errorf("name is not valid UTF-8")
	}
	if !utf8.ValidString(c.Text) {
		return bad("text")
	}
	for i, m := range c.Messages {
		for _, s := range []string{m.Role, m.Name, m.Content, m.ToolCallID, m.ToolName} {
			if !utf8.ValidString(s) {
				return bad(fmt.Sprintf("message %d", i))
			}
		}
		for _, tc := range m.ToolCalls {
			if !utf8.ValidString(tc.ID + tc.Name + tc.Arguments) {
				return bad(fmt.Sprintf("message %d tool call", i))
			}
		}
	}
	for k, v := range c.Metadata {
		if !utf8.ValidString(k) || !utf8.ValidString(v) {
			return bad("metadata")
		}
	}
	return nil
}

// countComponent counts c piece by piece — each message's text, or each
// section of its text (tokenizer.Sections; the whole text when the
// counter is not additive) — taking the count of a piece seen in the last
// answer (prev) instead of counting it again, so a changed component costs
// in proportion to what changed. The count is exact: the same as counting
// the whole. It returns the counts of this answer's pieces for the next.
func countComponent(counter tokenizer.Counter, c *sdk.Component, prev map[string]int) (int, map[string]int) {
	next := make(map[string]int, len(prev))
	total := 0
	add := func(piece string) {
		n, ok := next[piece]
		if !ok {
			if n, ok = prev[piece]; !ok {
				n = counter.Count(piece)
			}
			next[piece] = n
		}
		total += n
	}
	switch {
	case c.IsMessages():
		for _, m := range c.Messages {
			add(sdk.MessageText(m))
		}
	case tokenizer.Additive(counter):
		for _, piece := range tokenizer.Sections(c.Text) {
			add(piece)
		}
	default:
		add(c.Text)
	}
	return total, next
}

// accept records c (counted as tokens), fetched from generation gen, as
// the plugin's current answer.
func (p *boundPlugin) accept(c *sdk.Component, tokens int, counts map[string]int, gen int) {
	p.last, p.lastTokens, p.lastCounts, p.lastGen, p.fresh, p.hooked = c, tokens, counts, gen, true, false
}

// hookDue reports whether the plugin's Prepared hook is called this turn:
// it has one, and either it runs on every turn or the plugin may have
// changed since it last ran (its answer was fetched anew, or it is not
// fresh).
func (p *boundPlugin) hookDue() bool {
	if !p.info.HasCapability(sdk.CapPrepared) {
		return false
	}
	return !p.info.HasCapability(sdk.CapPreparedOnChange) || !p.hooked || !p.reusable()
}

// checkApplyResult rejects an op result that is not valid UTF-8 JSON (an
// empty result is allowed).
func checkApplyResult(out json.RawMessage) error {
	if len(out) == 0 {
		return nil
	}
	if !utf8.Valid(out) || !json.Valid(out) {
		return fmt.Errorf("invalid result: not valid UTF-8 JSON (%d bytes)", len(out))
	}
	return nil
}

// CheckBinding reports whether b can be bound to a session: a priority of
// 0..100 and a known slot, from the binding or the plugin's description.
// A caller can leave out an optional plugin that fails it instead of
// failing every session.
func CheckBinding(b PluginBinding) error {
	_, err := newBoundPlugin(b)
	return err
}
