package responses

import (
	"encoding/json"

	"github.com/ctxhost/ctxhost/provider"
	"github.com/ctxhost/ctxhost/provider/openai"
	"github.com/ctxhost/ctxhost/sdk"
)

// DecodeTools reads the function tools, tool_choice and text.format
// fields (absent: nil).
func DecodeTools(tools, choice, text json.RawMessage) (sdk.RequestTools, error) {
	var rt sdk.RequestTools
	var defs []struct {
		Type        string          `json:"type"`
		Name        string          `json:"name"`
		Description string          `json:"description"`
		Parameters  json.RawMessage `json:"parameters"`
	}
	if err := provider.DecodeField(tools, "tools", &defs); err != nil {
		return rt, err
	}
	for _, t := range defs {
		if t.Type == "function" {
			rt.Tools = append(rt.Tools, sdk.ToolDefinition{Name: t.Name, Description: t.Description, Parameters: t.Parameters})
		}
	}
	var err error
	if rt.ToolChoice, err = openai.ToolChoice(choice); err != nil {
		return rt, err
	}
	var format struct {
		Format struct {
			Type   string          `json:"type"`
			Name   string          `json:"name"`
			Schema json.RawMessage `json:"schema"`
			Strict bool            `json:"strict"`
		} `json:"format"`
	}
	if err := provider.DecodeField(text, "text", &format); err != nil {
		return rt, err
	}
	if f := format.Format; f.Type == "json_schema" && len(f.Schema) > 0 {
		rt.ResponseFormat = &sdk.ResponseFormat{Name: f.Name, Schema: f.Schema, Strict: f.Strict}
	}
	return rt, nil
}
