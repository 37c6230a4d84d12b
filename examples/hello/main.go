// Command ctxhost-plugin-hello is the hello-world ctxhost context plugin: a
// list of notes the agent adds to, shown in the context, oldest notes
// dropped first under pressure. Copy it to start your own plugin.
package main

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/ctxhost/ctxhost/sdk"
	"github.com/ctxhost/ctxhost/sdk/serve"
)

func main() { serve.Plugin(plugin{}) }

type plugin struct{}

func (plugin) Describe() sdk.PluginInfo {
	return sdk.PluginInfo{Name: "notes", Description: "notes the agent keeps", Priority: 8, Compactable: true,
		Ops: []sdk.OpInfo{{Name: "add", Description: `add a note: {"text": "..."}`}}}
}

func (plugin) NewSession(string) sdk.Session { return &notes{} }

// notes is one session's state; the SDK serializes calls into it.
type notes struct{ Items []string }

func (n *notes) text() string { return "- " + strings.Join(n.Items, "\n- ") }

func (n *notes) Component(context.Context, string) (*sdk.Component, error) {
	if len(n.Items) == 0 {
		return nil, nil
	}
	return &sdk.Component{Text: n.text()}, nil // named, ranked and placed by the host
}

func (n *notes) Apply(_ context.Context, op string, args json.RawMessage) (json.RawMessage, error) {
	if op != "add" {
		return nil, sdk.UnknownOp(op)
	}
	var a struct{ Text string }
	if err := json.Unmarshal(args, &a); err != nil || strings.TrimSpace(a.Text) == "" {
		return nil, sdk.InvalidArgs(`want {"text": "a non-empty note"}`)
	}
	n.Items = append(n.Items, a.Text)
	return json.Marshal(map[string]int{"notes": len(n.Items)})
}

// Compact drops the oldest notes until enough tokens are freed.
func (n *notes) Compact(_ context.Context, req sdk.CompactRequest) (sdk.CompactResult, error) {
	before, err := sdk.CountTokens(req.Encoding, n.text())
	if err != nil {
		return sdk.CompactResult{}, err
	}
	freed, dropped := 0, 0
	for len(n.Items) > 0 && freed < req.TokensNeeded {
		n.Items, dropped = n.Items[1:], dropped+1
		after, _ := sdk.CountTokens(req.Encoding, n.text())
		if len(n.Items) == 0 {
			after = 0
		}
		freed = before - after
	}
	return sdk.CompactResult{Log: fmt.Sprintf("dropped the %d oldest notes", dropped), ClaimedFreed: freed}, nil
}

func (n *notes) State() ([]byte, error) { return json.Marshal(n) }
func (n *notes) Restore(b []byte) error { return json.Unmarshal(b, n) }
