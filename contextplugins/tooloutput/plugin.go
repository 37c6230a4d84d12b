package tooloutput

import (
	"context"
	"encoding/json"
	"math"

	"github.com/ctxhost/ctxhost/sdk"
)

const (
	pluginName     = "tool_outputs"
	pluginVersion  = "0.1.0"
	pluginPriority = 10

	// defaultKeepRecent is how many of the latest outputs are shown in full.
	defaultKeepRecent = 10
)

// toolOutputPlugin is the tool-output plugin; its config applies to every
// session.
type toolOutputPlugin struct {
	keepRecent int
}

var (
	_ sdk.Plugin     = (*toolOutputPlugin)(nil)
	_ sdk.Configurer = (*toolOutputPlugin)(nil)
)

// Describe declares the tool-output plugin: priority 10 (compacted first),
// with exportable state and a keep_recent config attribute.
func (*toolOutputPlugin) Describe() sdk.PluginInfo {
	return sdk.PluginInfo{
		Name:            pluginName,
		Version:         pluginVersion,
		Description:     "Recent tool outputs: the latest in full, older ones as placeholders that name the tool, size and exit code; the originals stay retrievable.",
		Priority:        pluginPriority,
		Compactable:     true,
		Slot:            sdk.SlotContext,
		ProtocolVersion: sdk.ProtocolVersion,
		Capabilities:    []string{sdk.CapCompact, sdk.CapState},
		Ops: []sdk.OpInfo{
			{Name: opAddOutput, Description: "Record a tool result: {tool, output, exit_code?, call_id?}; returns {id}."},
			{Name: opGetOutput, Description: "Return the full original output by {id}, even when masked or dropped from the context."},
			{Name: opList, Description: "List every output (id, tool, exit code, call id, lines, bytes, how it is shown) without the text."},
		},
		ConfigSchema: []sdk.ConfigField{{
			Name:        "keep_recent",
			Type:        sdk.ConfigNumber,
			Description: "How many of the latest outputs are shown in full; older ones are shown as placeholders. A whole number >= 0.",
			Default:     json.RawMessage("10"),
		}},
	}
}

type toolOutputConfig struct {
	KeepRecent *float64 `json:"keep_recent"`
}

// Configure reads {"keep_recent": n}: a whole number >= 0 (null or absent
// means the default, 10). A bad value is ErrInvalidArgs and changes nothing.
func (p *toolOutputPlugin) Configure(raw json.RawMessage) error {
	var c toolOutputConfig
	if err := sdk.DecodeArgs(raw, &c); err != nil {
		return err
	}
	n := defaultKeepRecent
	if c.KeepRecent != nil {
		v := *c.KeepRecent
		if v < 0 || v != math.Trunc(v) || v > math.MaxInt32 {
			return sdk.InvalidArgs("keep_recent must be a whole number >= 0, got %v", v)
		}
		n = int(v)
	}
	p.keepRecent = n
	return nil
}

// NewSession returns an empty session.
func (p *toolOutputPlugin) NewSession(string) sdk.Session {
	return &toolOutputSession{keepRecent: p.keepRecent}
}

var (
	_ sdk.Session   = (*toolOutputSession)(nil)
	_ sdk.Compactor = (*toolOutputSession)(nil)
	_ sdk.Stater    = (*toolOutputSession)(nil)
)

// Component returns the rendered outputs, or nil when none is shown.
func (s *toolOutputSession) Component(context.Context, string) (*sdk.Component, error) {
	if len(s.outputs) == 0 {
		return nil, nil
	}
	return &sdk.Component{
		Slot: sdk.SlotContext,
		Text: s.render(),
	}, nil
}

// Apply runs one op; see Describe for the list.
func (s *toolOutputSession) Apply(_ context.Context, op string, args json.RawMessage) (json.RawMessage, error) {
	switch op {
	case opAddOutput:
		return s.addOutput(args)
	case opGetOutput:
		return s.getOutput(args)
	case opList:
		return s.list(args)
	}
	return nil, sdk.UnknownOp(op)
}
