package openai

import (
	"encoding/json"
	"fmt"

	"github.com/ctxhost/ctxhost/provider"
	"github.com/ctxhost/ctxhost/sdk"
)

// ToolFields are the request fields that carry tools.
var ToolFields = []string{"tools", "tool_choice", "response_format"}

// ToolChoice reads an OpenAI tool_choice: a mode, or a named function
// (Chat Completions nests the name in function, Responses does not); nil
// for none or a provider tool's choice, which ctxhost does not count.
func ToolChoice(raw json.RawMessage) (*sdk.ToolChoice, error) {
	if raw == nil || string(raw) == "null" {
		return nil, nil
	}
	var mode string
	if json.Unmarshal(raw, &mode) == nil {
		return &sdk.ToolChoice{Mode: mode}, nil
	}
	var named struct {
		Type     string `json:"type"`
		Name     string `json:"name"`
		Function struct {
			Name string `json:"name"`
		} `json:"function"`
	}
	if err := json.Unmarshal(raw, &named); err != nil {
		return nil, fmt.Errorf("tool_choice: %w", err)
	}
	if named.Type != "function" {
		return nil, nil // a provider tool (or allowed_tools): not one ctxhost counts
	}
	name := named.Function.Name
	if name == "" {
		name = named.Name
	}
	return &sdk.ToolChoice{Mode: sdk.ToolChoiceTool, Name: name}, nil
}

// DecodeTools reads the function tools, tool_choice and response_format
// fields (absent: nil).
func DecodeTools(tools, choice, responseFormat json.RawMessage) (sdk.RequestTools, error) {
	var rt sdk.RequestTools
	var defs []struct {
		Type     string `json:"type"`
		Function struct {
			Name        string          `json:"name"`
			Description string          `json:"description"`
			Parameters  json.RawMessage `json:"parameters"`
		} `json:"function"`
	}
	if err := provider.DecodeField(tools, "tools", &defs); err != nil {
		return rt, err
	}
	for _, t := range defs {
		if t.Type == "function" {
			rt.Tools = append(rt.Tools, sdk.ToolDefinition{Name: t.Function.Name, Description: t.Function.Description, Parameters: t.Function.Parameters})
		}
	}
	var err error
	if rt.ToolChoice, err = ToolChoice(choice); err != nil {
		return rt, err
	}
	var rf struct {
		Type       string `json:"type"`
		JSONSchema struct {
			Name   string          `json:"name"`
			Schema json.RawMessage `json:"schema"`
			Strict bool            `json:"strict"`
		} `json:"json_schema"`
	}
	if err := provider.DecodeField(responseFormat, "response_format", &rf); err != nil {
		return rt, err
	}
	if rf.Type == "json_schema" && len(rf.JSONSchema.Schema) > 0 {
		rt.ResponseFormat = &sdk.ResponseFormat{Name: rf.JSONSchema.Name, Schema: rf.JSONSchema.Schema, Strict: rf.JSONSchema.Strict}
	}
	return rt, nil
}
