package host

import (
	"cmp"
	"context"

	"fmt"
	"slices"
	"sync"

	"github.com/ctxhost/ctxhost/sdk"
)

// countedComponent is a component of this turn with its token count and
// where it came from (plugin nil: the core or the history).
type countedComponent struct {
	comp   sdk.Component
	tokens int
	plugin *boundPlugin
	// dropped: the plugin compacted its component away entirely.
	dropped bool
	// view: an agent's window (AgentView.History), not the session's
	// history; it is not masked, compacted or cut.
	view bool
	// facts: the facts component (see factsComponent), rendered again
	// whenever the history changes.
	facts bool
}

// isHistory reports whether c is the session's history.
func (c *countedComponent) isHistory() bool {
	return c.plugin == nil && !c.view && c.comp.Name == sdk.ComponentHistory
}

// slotRank orders components: tools first (providers put them at the
// head of the cached prefix), then system, context, history, input.
var slotRank = map[sdk.Slot]int{sdk.SlotTools: -1, sdk.SlotSystem: 0, sdk.SlotContext: 1, sdk.SlotHistory: 2, sdk.SlotInput: 3}

// gather builds this turn's components: the core ones and one per plugin
// (fetched concurrently, each with its deadline, unless its last answer is
// still valid). Optional plugins that fail are left out with a warning; a
// required one fails the call. The order is deterministic: by slot, core
// before plugins, plugins in binding order. With an agent's view, the
// view's parts replace the session's texts and history.
func (t *turn) gather(ctx context.Context, view *AgentView) ([]countedComponent, []string, []PluginFailure, error) {
	s := t.s
	out := make([]countedComponent, 0, 4+len(s.plugins.all))
	core := func(name string, slot sdk.Slot, t countedText) {
		if t.text != "" {
			out = append(out, countedComponent{comp: sdk.Component{Name: name, Slot: slot, Text: t.text}, tokens: t.tokens})
		}
	}
	mem, hasMemory, err := t.memoryComponent(ctx)
	if err != nil {
		return nil, nil, nil, err
	}
	if view != nil {
		out = t.viewComponents(view, mem, hasMemory)
	} else {
		core(sdk.ComponentTools, sdk.SlotTools, s.conv.tools)
		core(sdk.ComponentSystemPrompt, sdk.SlotSystem, s.conv.system)
		core(sdk.ComponentInstructions, sdk.SlotSystem, s.conv.instructions)
		if hasMemory {
			out = append(out, mem)
		}
		if s.conv.hist.Len() > 0 {
			out = append(out, t.historyComponent())
			if limit := s.cfg.Facts.limit(s.cfg.Window - s.cfg.Reserved); limit > 0 && s.cfg.Fit == nil {
				out = append(out, t.factsComponent(limit))
			}
		}
		core(sdk.ComponentInput, sdk.SlotInput, s.conv.input)
	}

	answers := t.fetchPlugins(ctx)
	var warnings []string
	var leftOut []PluginFailure
	names := map[string]bool{}
	for _, c := range out {
		names[c.comp.Name] = true
	}
	for i, p := range s.plugins.all {
		a := answers[i]
		if a.cutOff != nil {
			s.emit(Event{Type: EventCallRetried, Session: s.id, Plugin: p.binding.Name, Err: a.cutOff})
			if a.err == nil {
				warnings = append(warnings, retriedWarning(fmt.Sprintf("plugin %q: component", p.binding.Name), a.cutOff.Error()))
			}
		}
		if a.err == nil && a.f.comp != nil && names[a.f.comp.Name] {
			a.err = fmt.Errorf("invalid component: name %q is already taken", a.f.comp.Name)
		}
		if a.err != nil {
			p.fresh = false
			s.emit(Event{Type: EventPluginFailed, Session: s.id, Plugin: p.binding.Name, Err: a.err})
			if p.binding.Required {
				return nil, warnings, nil, &RequiredPluginError{Plugin: p.binding.Name, Err: a.err}
			}
			warnings = append(warnings, fmt.Sprintf("plugin %q left out: %v", p.binding.Name, a.err))
			leftOut = append(leftOut, PluginFailure{Plugin: p.binding.Name, Err: a.err})
			continue
		}
		if a.fetched {
			p.accept(a.f.comp, a.f.tokens, a.f.counts, a.gen)
		}
		if p.last == nil {
			continue
		}
		names[p.last.Name] = true
		out = append(out, countedComponent{comp: *p.last, tokens: p.lastTokens, plugin: p})
	}
	slices.SortStableFunc(out, func(a, b countedComponent) int { return cmp.Compare(slotRank[a.comp.Slot], slotRank[b.comp.Slot]) })
	return out, warnings, leftOut, nil
}

// historyComponent returns the history's compacted view as a component.
// The history shares its view (history.Shared), extended in place when
// messages were only appended, so a turn costs what changed, not a walk
// over every message.
func (t *turn) historyComponent() countedComponent {
	s := t.s
	v := s.conv.hist.Shared()
	return countedComponent{
		comp: sdk.Component{
			Name: sdk.ComponentHistory, Slot: sdk.SlotHistory,
			Priority: *s.cfg.History.Priority, Compactable: *s.cfg.History.Priority > 0,
			Messages: v.Messages, // shared, read-only
		},
		tokens: v.Total,
	}
}

type pluginAnswer struct {
	f       fetched
	gen     int
	err     error
	cutOff  error // the first attempt's error when the call was retried
	fetched bool  // false: the last answer is reused
}

func (t *turn) fetchPlugins(ctx context.Context) []pluginAnswer {
	s := t.s
	answers := make([]pluginAnswer, len(s.plugins.all))
	if !slices.ContainsFunc(s.plugins.all, func(p *boundPlugin) bool { return !p.reusable() }) {
		return answers // every last answer is reused
	}
	var wg sync.WaitGroup
	for i, p := range s.plugins.all {
		if p.reusable() {
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			f, gen, cutOff, err := p.fetch(ctx, s.id, s.cfg.Encoding, s.counter)
			answers[i] = pluginAnswer{f: f, gen: gen, cutOff: cutOff, err: err, fetched: true}
		}()
	}
	wg.Wait()
	return answers
}
