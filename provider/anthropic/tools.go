package anthropic

import (
	"encoding/json"

	"github.com/ctxhost/ctxhost/provider"
	"github.com/ctxhost/ctxhost/sdk"
)

// ToolFields are the request fields that carry tools.
var ToolFields = []string{"tools", "tool_choice"}

// DecodeTools reads the tools and tool_choice fields (server tools, which
// carry a type, are left to the provider).
func DecodeTools(tools, choice json.RawMessage) (sdk.RequestTools, error) {
	var rt sdk.RequestTools
	var defs []struct {
		Type        string          `json:"type"`
		Name        string          `json:"name"`
		Description string          `json:"description"`
		InputSchema json.RawMessage `json:"input_schema"`
	}
	if err := provider.DecodeField(tools, "tools", &defs); err != nil {
		return rt, err
	}
	for _, t := range defs {
		if t.Type == "" || t.Type == "custom" {
			rt.Tools = append(rt.Tools, sdk.ToolDefinition{Name: t.Name, Description: t.Description, Parameters: t.InputSchema})
		}
	}
	var c struct {
		Type string `json:"type"`
		Name string `json:"name"`
	}
	if err := provider.DecodeField(choice, "tool_choice", &c); err != nil {
		return rt, err
	}
	switch c.Type {
	case "auto", "none":
		rt.ToolChoice = &sdk.ToolChoice{Mode: c.Type}
	case "any":
		rt.ToolChoice = &sdk.ToolChoice{Mode: sdk.ToolChoiceRequired}
	case "tool":
		rt.ToolChoice = &sdk.ToolChoice{Mode: sdk.ToolChoiceTool, Name: c.Name}
	}
	return rt, nil
}
