package host

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"slices"
	"unicode/utf8"

	"github.com/ctxhost/ctxhost/host/history"
	"github.com/ctxhost/ctxhost/sdk"
)

// StateVersion is the version of the exported session state format.
const StateVersion = 1

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
	History      []byte        `json:"history"`
	Usage        usage         `json:"usage"`
	Pressure     pressureState `json:"pressure"`
	Plugins      []pluginState `json:"plugins,omitempty"`
	// Position is the caller's position in its input (Session.SetPosition).
	Position json.RawMessage `json:"position,omitempty"`
	// Attachment is the caller's own state (Session.SaveAttachment).
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

// ExportState returns the whole session (core and every stateful plugin's
// state) as versioned JSON. RestoreState of the result reproduces the
// session exactly.
func (s *Session) ExportState(ctx context.Context) ([]byte, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.exportLocked(ctx, s.pluginState)
}

// exportLocked exports the session with stateOf giving each stateful
// plugin's state; the caller holds s.mu.
func (s *Session) exportLocked(ctx context.Context, stateOf func(context.Context, *boundPlugin) ([]byte, error)) ([]byte, error) {
	hist, err := s.hist.State()
	if err != nil {
		return nil, fmt.Errorf("export %q: history: %w", s.id, err)
	}
	st := sessionState{
		Version: StateVersion, Session: s.id,
		SystemPrompt: s.system.text, Instructions: s.instructions.text, Input: s.input.text, Tools: s.tools.text,
		TeamTask: s.teamTask.text, Strategy: strategyState(s.cfg.Strategy), History: hist, Usage: s.usage, Pressure: s.pressure,
		Position: s.rec.position, Attachment: s.rec.attachment,
	}
	for _, p := range s.plugins {
		if !p.info.HasCapability(sdk.CapState) {
			continue
		}
		b, err := stateOf(ctx, p)
		if err != nil {
			return nil, fmt.Errorf("export %q: plugin %q: %w", s.id, p.binding.Name, err)
		}
		st.Plugins = append(st.Plugins, pluginState{Name: p.binding.Name, State: b})
	}
	out, err := json.Marshal(st)
	if err != nil {
		return nil, fmt.Errorf("export %q: %w", s.id, err)
	}
	return out, nil
}

// pluginState asks the plugin for the session's state (retried once when
// cut off by its deadline, with a plugin:retried event).
func (s *Session) pluginState(ctx context.Context, p *boundPlugin) ([]byte, error) {
	b, cutOff, err := callRetryingOnce(ctx, p.binding.Timeout, func(ctx context.Context) ([]byte, error) {
		return p.binding.Plugin.State(ctx, s.id)
	})
	if cutOff != nil {
		s.events.emit(Event{Type: EventCallRetried, Session: s.id, Plugin: p.binding.Name, Err: cutOff})
	}
	return b, err
}

func (s *Session) restorePlugin(ctx context.Context, p *boundPlugin, b []byte) error {
	_, err := callWithDeadline(ctx, p.binding.Timeout, func(ctx context.Context) (struct{}, error) {
		return struct{}{}, p.binding.Plugin.Restore(ctx, s.id, b)
	})
	return err
}

// RestoreState replaces the session's state with an exported one (possibly
// from another session id). Invalid state is rejected before anything
// changes; if a plugin rejects its state, the plugins already restored are
// rolled back and the session is unchanged. With a store, an error
// wrapping ErrNotPersisted means the state was restored but not saved.
func (s *Session) RestoreState(ctx context.Context, data []byte) error {
	return s.restore(ctx, data, true)
}

// restore is RestoreState; persist saves the restored state to the store.
func (s *Session) restore(ctx context.Context, data []byte, persist bool) error {
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
		p, err := s.slot(ps.Name)
		if err != nil {
			return fmt.Errorf("restore %q: %w", s.id, err)
		}
		slots[i] = p
	}
	if err := s.checkPluginStates(st.Plugins); err != nil {
		return fmt.Errorf("restore %q: %w", s.id, err)
	}
	hist := history.New(s.counter, s.cfg.History.Options)
	if err := hist.Restore(st.History); err != nil {
		return fmt.Errorf("restore %q: history: %w", s.id, err)
	}
	if err := s.restorePlugins(ctx, slots, st.Plugins); err != nil {
		return fmt.Errorf("restore %q: %w", s.id, err)
	}
	s.system = countedText{st.SystemPrompt, s.counter.Count(st.SystemPrompt)}
	s.instructions = countedText{st.Instructions, s.counter.Count(st.Instructions)}
	s.input = countedText{st.Input, s.counter.Count(st.Input)}
	s.tools = s.countTools(st.Tools)
	s.teamTask = countedText{st.TeamTask, s.counter.Count(st.TeamTask)}
	s.cfg.Strategy, s.strategy = strategyCfg, strategy
	s.setHistory(hist)
	s.usage, s.pressure, s.rec.position, s.rec.attachment = st.Usage, st.Pressure.restored(), st.Position, st.Attachment
	s.rec.pending = s.rec.pending[:0]
	if persist {
		// An imported state's turn mark names versions of another store.
		s.pressure.TurnVersion, s.pressure.TurnAgent, s.pressure.TurnBudget = 0, "", 0
		s.rec.stale()
		if err := s.persist(); err != nil {
			return fmt.Errorf("restore %q: %w", s.id, err)
		}
	}
	return nil
}

// restorePlugins restores each plugin's state; on a failure it puts back the
// previous state of the ones already restored.
func (s *Session) restorePlugins(ctx context.Context, slots []*boundPlugin, states []pluginState) error {
	prev := make([][]byte, len(slots))
	for i, p := range slots {
		b, err := s.pluginState(ctx, p)
		if err != nil {
			return fmt.Errorf("plugin %q: save state before restore: %w", p.binding.Name, err)
		}
		prev[i] = b
	}
	for i, p := range slots {
		p.fresh = false
		if err := s.restorePlugin(ctx, p, states[i].State); err != nil {
			var errs []error
			for j := range i {
				if rerr := s.restorePlugin(ctx, slots[j], prev[j]); rerr != nil {
					errs = append(errs, fmt.Errorf("roll back plugin %q: %w", slots[j].binding.Name, rerr))
				}
			}
			return errors.Join(append([]error{fmt.Errorf("plugin %q: %w", p.binding.Name, err)}, errs...)...)
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
	if st.Version != StateVersion {
		return st, fmt.Errorf("state version %d, want %d", st.Version, StateVersion)
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
	}
	return nil
}

// checkPluginStates fails unless states holds an entry for every bound
// plugin that has state: a state without one would silently start that
// plugin empty.
func (s *Session) checkPluginStates(states []pluginState) error {
	have := map[string]bool{}
	for _, p := range states {
		have[p.Name] = true
	}
	for _, p := range s.plugins {
		if p.info.HasCapability(sdk.CapState) && !have[p.binding.Name] {
			return fmt.Errorf("state holds nothing for plugin %q (bound with state): refusing to start it empty", p.binding.Name)
		}
	}
	return nil
}
