package memory

import (
	"context"
	"encoding/json"
	"math"

	"github.com/ctxhost/ctxhost/sdk"
)

const (
	pluginName     = "memory"
	pluginVersion  = "0.1.0"
	pluginPriority = 8
)

// memoryPlugin is the memory plugin; its config applies to every session.
type memoryPlugin struct {
	maxEntries int // 0: unlimited
}

var (
	_ sdk.Plugin     = (*memoryPlugin)(nil)
	_ sdk.Configurer = (*memoryPlugin)(nil)
)

// Describe declares the memory plugin: priority 8, compactable, with
// exportable state and a turn clock driven by the Prepared hook, which
// changes nothing on a turn where no entry was used (prepared_on_change:
// the host leaves it out of such turns).
func (*memoryPlugin) Describe() sdk.PluginInfo {
	return sdk.PluginInfo{
		Name:            pluginName,
		Version:         pluginVersion,
		Description:     "Working memory: values stored under keys; the context shows an index of keys and descriptions, least recently used entries are evicted from it under pressure.",
		Priority:        pluginPriority,
		Compactable:     true,
		Slot:            sdk.SlotContext,
		ProtocolVersion: sdk.ProtocolVersion,
		Capabilities:    []string{sdk.CapCompact, sdk.CapState, sdk.CapPrepared, sdk.CapPreparedOnChange},
		Ops: []sdk.OpInfo{
			{Name: opStore, Description: "Insert or replace an entry: {key, value (any JSON), description?, importance? (0..1, default 0.5)}."},
			{Name: opGet, Description: "Return an entry's value by {key}; counts as a use and brings an evicted entry back into the index."},
			{Name: opDelete, Description: "Delete an entry by {key}."},
			{Name: opList, Description: "List every entry (key, description, importance, size, evicted) without values; not a use."},
		},
		ConfigSchema: []sdk.ConfigField{{
			Name:        "max_entries",
			Type:        sdk.ConfigNumber,
			Description: "Most entries kept; storing a new key beyond it deletes the first entry in eviction order (evicted entries first). 0 means unlimited.",
			Default:     json.RawMessage("0"),
		}},
	}
}

type memoryConfig struct {
	MaxEntries *float64 `json:"max_entries"`
}

// Configure reads {"max_entries": n}: a whole number >= 0 (null or absent
// means 0, unlimited).
func (p *memoryPlugin) Configure(raw json.RawMessage) error {
	var c memoryConfig
	if err := sdk.DecodeArgs(raw, &c); err != nil {
		return err
	}
	n := 0
	if c.MaxEntries != nil {
		v := *c.MaxEntries
		if v < 0 || v != math.Trunc(v) || v > math.MaxInt32 {
			return sdk.InvalidArgs("max_entries must be a whole number >= 0, got %v", v)
		}
		n = int(v)
	}
	p.maxEntries = n
	return nil
}

// NewSession returns an empty memory.
func (p *memoryPlugin) NewSession(string) sdk.Session {
	return &memorySession{maxEntries: p.maxEntries, entries: map[string]*entry{}}
}

var (
	_ sdk.Session      = (*memorySession)(nil)
	_ sdk.Compactor    = (*memorySession)(nil)
	_ sdk.Stater       = (*memorySession)(nil)
	_ sdk.PreparedHook = (*memorySession)(nil)
)

// Component returns the index, or nil when memory is empty.
func (s *memorySession) Component(context.Context, string) (*sdk.Component, error) {
	if len(s.entries) == 0 {
		return nil, nil
	}
	return &sdk.Component{
		Slot: sdk.SlotContext,
		Text: s.render(),
	}, nil
}

// Apply runs one op; see Describe for the list.
func (s *memorySession) Apply(_ context.Context, op string, args json.RawMessage) (json.RawMessage, error) {
	switch op {
	case opStore:
		return s.store(args)
	case opGet:
		return s.get(args)
	case opDelete:
		return s.delete(args)
	case opList:
		return s.list(args)
	}
	return nil, sdk.UnknownOp(op)
}

// Prepared advances the turn clock when an entry was used since it last
// advanced: entries used in the same turn are equally recent, and
// importance decides among them. Only the order of the clocks matters, so
// a turn in which no entry was used need not advance it, and does not:
// the hook then changes nothing, and the memory is the same whether the
// host calls it on every turn or only after a change.
func (s *memorySession) Prepared(context.Context, sdk.Budget) error {
	for _, e := range s.entries {
		if e.LastTurn == s.turn {
			s.turn++
			break
		}
	}
	return nil
}
