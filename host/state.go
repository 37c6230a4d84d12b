package host

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"unicode/utf8"

	"github.com/ctxhost/ctxhost/host/history"
	"github.com/ctxhost/ctxhost/sdk"
)

// StateVersion is the version of the exported session state format.
// Version 1 states, whose history is its JSON in base64, are still read.
const StateVersion = 2

// sessionState is the exported form of a session: its core, the history
// (messages and view), the usage and pressure bookkeeping, the strategy and
// every stateful plugin's state bytes, plugins in binding order.
type sessionState struct {
	Version      int           `json:"version"`
	Session      string        `json:"session"`
	SystemPrompt string        `json:"system_prompt"`
	Instructions string        `json:"instructions"`
	Input        string        `json:"input"`
	Tools        string        `json:"tools,omitempty"` // sdk.ToolsText of the request's tools
	TeamTask     string        `json:"team_task,omitempty"`
	Strategy     strategyState `json:"strategy"`
	History      historyState  `json:"history"`
	Usage        usage         `json:"usage"`
	Pressure     pressureState `json:"pressure"`
	Plugins      []pluginState `json:"plugins,omitempty"`
	// Position is the caller's position in its input (Durability.SetPosition).
	Position json.RawMessage `json:"position,omitempty"`
	// Attachment is the caller's own state (Durability.SaveAttachment).
	Attachment json.RawMessage `json:"attachment,omitempty"`
}

type strategyState struct {
	Name           string  `json:"name"`
	Target         float64 `json:"target"`
	CarryoverTurns int     `json:"carryover_turns"`
	MaskBatch      int     `json:"mask_batch"`
	AdaptiveWindow int     `json:"adaptive_window"`
	MinFree        int     `json:"min_free,omitempty"`
}

type pluginState struct {
	Name  string `json:"name"`
	State []byte `json:"state"`
}

// Export returns the whole session (core and every stateful plugin's
// state) as versioned JSON. Restore of the result reproduces the
// session exactly.
func (d *Durability) Export(ctx context.Context) ([]byte, error) {
	s := d.s
	s.mu.Lock()
	defer s.mu.Unlock()
	return d.export(ctx, s.plugins.state)
}

// export exports the session with stateOf giving each stateful
// plugin's state; the caller holds s.mu.
func (d *Durability) export(ctx context.Context, stateOf func(context.Context, *boundPlugin) ([]byte, error)) ([]byte, error) {
	s := d.s
	hist, err := s.conv.hist.State()
	if err != nil {
		return nil, fmt.Errorf("export %q: history: %w", s.id, err)
	}
	st := sessionState{
		Version: StateVersion, Session: s.id,
		SystemPrompt: s.conv.system.text, Instructions: s.conv.instructions.text, Input: s.conv.input.text, Tools: s.conv.tools.text,
		TeamTask: s.conv.teamTask.text, Strategy: strategyState(s.cfg.Strategy), History: historyState{data: hist}, Usage: s.plan.usage, Pressure: s.plan.pressureToSave(),
		Position: d.rec.position, Attachment: d.rec.attachment,
	}
	for _, p := range s.plugins.all {
		if !p.info.HasCapability(sdk.CapState) {
			continue
		}
		b, err := stateOf(ctx, p)
		if err != nil {
			return nil, fmt.Errorf("export %q: plugin %q: %w", s.id, p.binding.Name, err)
		}
		st.Plugins = append(st.Plugins, pluginState{Name: p.binding.Name, State: b})
	}
	out, err := encodeState(st)
	if err != nil {
		return nil, fmt.Errorf("export %q: %w", s.id, err)
	}
	return out, nil
}

// Restore replaces the session's state with an exported one (possibly
// from another session id). Invalid state is rejected before anything
// changes; if a plugin rejects its state, the plugins already restored are
// rolled back and the session is unchanged. With a recorder, a failed
// save's error means the state was restored but not saved.
func (d *Durability) Restore(ctx context.Context, data []byte) error {
	return d.restore(ctx, data, true)
}

// restore is Restore; persist saves the restored state to the store.
func (d *Durability) restore(ctx context.Context, data []byte, persist bool) error {
	s := d.s
	st, err := decodeState(data)
	if err != nil {
		return fmt.Errorf("restore %q: %w", s.id, err)
	}
	strategyCfg := StrategyConfig(st.Strategy)
	strategy, err := newStrategy(strategyCfg)
	if err == nil {
		err = strategyCfg.validate()
	}
	if err != nil {
		return fmt.Errorf("restore %q: %w", s.id, err)
	}

	s.mu.Lock()
	defer s.mu.Unlock()
	slots := make([]*boundPlugin, len(st.Plugins))
	for i, ps := range st.Plugins {
		p, err := s.plugins.named(ps.Name)
		if err != nil {
			return fmt.Errorf("restore %q: %w", s.id, err)
		}
		slots[i] = p
	}
	if err := s.plugins.checkStates(st.Plugins); err != nil {
		return fmt.Errorf("restore %q: %w", s.id, err)
	}
	hist := history.New(s.counter, s.cfg.History.Options)
	if err := hist.Restore(st.History.data); err != nil {
		return fmt.Errorf("restore %q: history: %w", s.id, err)
	}
	if err := s.plugins.restoreAll(ctx, slots, st.Plugins); err != nil {
		return fmt.Errorf("restore %q: %w", s.id, err)
	}
	s.conv.system = countedText{st.SystemPrompt, s.counter.Count(st.SystemPrompt)}
	s.conv.instructions = countedText{st.Instructions, s.counter.Count(st.Instructions)}
	s.conv.input = countedText{st.Input, s.counter.Count(st.Input)}
	s.conv.tools = countTools(s.counter, s.cfg.History.Options.Framing, st.Tools)
	s.conv.teamTask = countedText{st.TeamTask, s.counter.Count(st.TeamTask)}
	s.plan.setStrategy(strategyCfg, strategy)
	s.conv.hist = d.rec.follow(hist)
	s.plan.usage, s.plan.pressure, d.rec.position, d.rec.attachment = st.Usage, st.Pressure.restored(), st.Position, st.Attachment
	s.plan.restoreTracks(s.plan.pressure.Tracks)
	d.rec.pending, d.feed.derived = d.rec.pending[:0], 0
	if persist {
		// An imported state's turn mark names versions of another store.
		s.plan.pressure.TurnVersion, s.plan.pressure.TurnAgent, s.plan.pressure.TurnBudget = 0, "", 0
		d.rec.stale()
		if err := d.persist(); err != nil {
			return fmt.Errorf("restore %q: %w", s.id, err)
		}
	}
	return nil
}

// decodeState parses and checks an exported session: valid UTF-8, known
// fields only, the current version, and every figure in its range. A
// damaged state is an error, never silently repaired.
func decodeState(data []byte) (sessionState, error) {
	var st sessionState
	if err := decodeStrict(data, &st); err != nil {
		return st, fmt.Errorf("state: %w", err)
	}
	if st.Version != StateVersion && st.Version != 1 {
		return st, fmt.Errorf("state version %d, want %d", st.Version, StateVersion)
	}
	if st.Version == StateVersion && st.History.base64 {
		return st, fmt.Errorf("state version %d with a version 1 history (a base64 string)", st.Version)
	}
	if err := checkFigures(st.Usage, st.Pressure); err != nil {
		return st, err
	}
	if tools, err := sdk.ParseTools(st.Tools); err != nil {
		return st, err
	} else if err := tools.Check(); err != nil {
		return st, fmt.Errorf("state: %w", err)
	}
	seen := map[string]bool{}
	for _, p := range st.Plugins {
		if seen[p.Name] {
			return st, fmt.Errorf("plugin %q appears twice", p.Name)
		}
		seen[p.Name] = true
	}
	return st, nil
}

// decodeStrict decodes one JSON value into v: valid UTF-8, known fields
// only, nothing after it.
func decodeStrict(data []byte, v any) error {
	if !utf8.Valid(data) {
		return fmt.Errorf("not valid UTF-8")
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return err
	}
	if dec.More() {
		return fmt.Errorf("data after the JSON object")
	}
	return nil
}

// checkFigures fails unless every usage and pressure figure is in range.
func checkFigures(u usage, pr pressureState) error {
	switch {
	case math.IsNaN(u.Calibration) || u.Calibration < 0.25 || u.Calibration > 4:
		return fmt.Errorf("calibration %g out of range [0.25, 4]", u.Calibration)
	case u.ReportedPrompt < 0 || u.CompletionTotal < 0 || u.LastCounted < 0:
		return fmt.Errorf("negative usage (prompt %d, completion %d, counted %d)", u.ReportedPrompt, u.CompletionTotal, u.LastCounted)
	case pr.LastUsed < 0 || slices.ContainsFunc(pr.Growth, func(g int) bool { return g < 0 }):
		return fmt.Errorf("negative pressure figures")
	case slices.ContainsFunc(pr.Tracks, func(t savedTrack) bool {
		return t.Messages < 0 || t.HistoryTokens < 0 || t.Stable < 0 || t.UnmanagedTotal < 0 ||
			slices.ContainsFunc(t.System, func(u savedUnit) bool { return u.Tokens < 0 })
	}):
		return fmt.Errorf("negative figures of a saved payload")
	}
	return nil
}

// historyState is the history's own state (history.State) as it sits in
// a session's state: its JSON object as it is (version 2), or that JSON
// as base64, as version 1 wrote it (base64 was a third larger, and one
// more encoding of the whole history every snapshot).
type historyState struct {
	data   []byte
	base64 bool // read from a version 1 state
}

// MarshalJSON writes the history's JSON as it is.
func (h historyState) MarshalJSON() ([]byte, error) {
	if len(h.data) == 0 {
		return []byte("null"), nil
	}
	return h.data, nil
}

// UnmarshalJSON reads the history's JSON object, or a version 1 state's
// base64 string of it.
func (h *historyState) UnmarshalJSON(b []byte) error {
	if len(b) > 0 && b[0] == '"' {
		var data []byte
		if err := json.Unmarshal(b, &data); err != nil {
			return fmt.Errorf("history: %w", err)
		}
		h.data, h.base64 = data, true
		return nil
	}
	if string(b) == "null" {
		h.data = nil
		return nil
	}
	h.data = append([]byte(nil), b...)
	return nil
}
