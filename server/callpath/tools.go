package callpath

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/ctxhost/ctxhost/engine"
	"github.com/ctxhost/ctxhost/sdk"
)

// The caller's tool definitions, tool choice and response schema go
// upstream as the caller wrote them (provider-specific tools and flags
// included); the session holds their function tools, choice and schema
// so that the budget counts them.

// setTools gives the session the request's tools when they changed.
func setTools(es *engine.Session, rt sdk.RequestTools) error {
	want, err := sdk.ToolsText(rt)
	if err != nil {
		return err
	}
	if have, err := sdk.ToolsText(es.Tools()); err == nil && have == want {
		return nil
	}
	return es.SetTools(rt)
}

// toolFields are the request fields that carry tools, per dialect: kept
// from the caller, never taken from the assembled payload.
var (
	chatToolFields      = []string{"tools", "tool_choice", "response_format"}
	anthropicToolFields = []string{"tools", "tool_choice"}
	geminiToolFields    = []string{"tools", "toolConfig", "generationConfig"}
)

func decodeField(fields object, key string, v any) error {
	raw := fields.get(key)
	if raw == nil || string(raw) == "null" {
		return nil
	}
	if err := json.Unmarshal(raw, v); err != nil {
		return fmt.Errorf("%s: %w", key, err)
	}
	return nil
}

// openAIChoice reads an OpenAI tool_choice: a mode, or a named function
// (Chat Completions nests the name in function, Responses does not).
func openAIChoice(raw json.RawMessage) (*sdk.ToolChoice, error) {
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

// chatTools reads Chat Completions tools, tool_choice and response_format.
func chatTools(fields object) (sdk.RequestTools, error) {
	var rt sdk.RequestTools
	var tools []struct {
		Type     string `json:"type"`
		Function struct {
			Name        string          `json:"name"`
			Description string          `json:"description"`
			Parameters  json.RawMessage `json:"parameters"`
		} `json:"function"`
	}
	if err := decodeField(fields, "tools", &tools); err != nil {
		return rt, err
	}
	for _, t := range tools {
		if t.Type == "function" {
			rt.Tools = append(rt.Tools, sdk.ToolDefinition{Name: t.Function.Name, Description: t.Function.Description, Parameters: t.Function.Parameters})
		}
	}
	var err error
	if rt.ToolChoice, err = openAIChoice(fields.get("tool_choice")); err != nil {
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
	if err := decodeField(fields, "response_format", &rf); err != nil {
		return rt, err
	}
	if rf.Type == "json_schema" && len(rf.JSONSchema.Schema) > 0 {
		rt.ResponseFormat = &sdk.ResponseFormat{Name: rf.JSONSchema.Name, Schema: rf.JSONSchema.Schema, Strict: rf.JSONSchema.Strict}
	}
	return rt, nil
}

// responsesTools reads Responses tools, tool_choice and text.format.
func responsesTools(fields object) (sdk.RequestTools, error) {
	var rt sdk.RequestTools
	var tools []struct {
		Type        string          `json:"type"`
		Name        string          `json:"name"`
		Description string          `json:"description"`
		Parameters  json.RawMessage `json:"parameters"`
	}
	if err := decodeField(fields, "tools", &tools); err != nil {
		return rt, err
	}
	for _, t := range tools {
		if t.Type == "function" {
			rt.Tools = append(rt.Tools, sdk.ToolDefinition{Name: t.Name, Description: t.Description, Parameters: t.Parameters})
		}
	}
	var err error
	if rt.ToolChoice, err = openAIChoice(fields.get("tool_choice")); err != nil {
		return rt, err
	}
	var text struct {
		Format struct {
			Type   string          `json:"type"`
			Name   string          `json:"name"`
			Schema json.RawMessage `json:"schema"`
			Strict bool            `json:"strict"`
		} `json:"format"`
	}
	if err := decodeField(fields, "text", &text); err != nil {
		return rt, err
	}
	if text.Format.Type == "json_schema" && len(text.Format.Schema) > 0 {
		rt.ResponseFormat = &sdk.ResponseFormat{Name: text.Format.Name, Schema: text.Format.Schema, Strict: text.Format.Strict}
	}
	return rt, nil
}

// anthropicTools reads Messages tools and tool_choice (server tools, which
// carry a type, are left to the provider).
func anthropicTools(fields object) (sdk.RequestTools, error) {
	var rt sdk.RequestTools
	var tools []struct {
		Type        string          `json:"type"`
		Name        string          `json:"name"`
		Description string          `json:"description"`
		InputSchema json.RawMessage `json:"input_schema"`
	}
	if err := decodeField(fields, "tools", &tools); err != nil {
		return rt, err
	}
	for _, t := range tools {
		if t.Type == "" || t.Type == "custom" {
			rt.Tools = append(rt.Tools, sdk.ToolDefinition{Name: t.Name, Description: t.Description, Parameters: t.InputSchema})
		}
	}
	var choice struct {
		Type string `json:"type"`
		Name string `json:"name"`
	}
	if err := decodeField(fields, "tool_choice", &choice); err != nil {
		return rt, err
	}
	switch choice.Type {
	case "auto", "none":
		rt.ToolChoice = &sdk.ToolChoice{Mode: choice.Type}
	case "any":
		rt.ToolChoice = &sdk.ToolChoice{Mode: sdk.ToolChoiceRequired}
	case "tool":
		rt.ToolChoice = &sdk.ToolChoice{Mode: sdk.ToolChoiceTool, Name: choice.Name}
	}
	return rt, nil
}

// geminiTools reads function declarations, the function calling mode and
// a response schema.
func geminiTools(fields object) (sdk.RequestTools, error) {
	var rt sdk.RequestTools
	var tools []struct {
		FunctionDeclarations []struct {
			Name                 string          `json:"name"`
			Description          string          `json:"description"`
			Parameters           json.RawMessage `json:"parameters"`
			ParametersJSONSchema json.RawMessage `json:"parametersJsonSchema"`
		} `json:"functionDeclarations"`
	}
	if err := decodeField(fields, "tools", &tools); err != nil {
		return rt, err
	}
	for _, t := range tools {
		for _, f := range t.FunctionDeclarations {
			params := f.Parameters
			if params == nil {
				params = f.ParametersJSONSchema
			}
			rt.Tools = append(rt.Tools, sdk.ToolDefinition{Name: f.Name, Description: f.Description, Parameters: params})
		}
	}
	var cfg struct {
		FunctionCallingConfig struct {
			Mode                 string   `json:"mode"`
			AllowedFunctionNames []string `json:"allowedFunctionNames"`
		} `json:"functionCallingConfig"`
	}
	if err := decodeField(fields, "toolConfig", &cfg); err != nil {
		return rt, err
	}
	switch mode := strings.ToUpper(cfg.FunctionCallingConfig.Mode); {
	case mode == "AUTO" || mode == "NONE":
		rt.ToolChoice = &sdk.ToolChoice{Mode: strings.ToLower(mode)}
	case mode == "ANY" && len(cfg.FunctionCallingConfig.AllowedFunctionNames) == 1:
		rt.ToolChoice = &sdk.ToolChoice{Mode: sdk.ToolChoiceTool, Name: cfg.FunctionCallingConfig.AllowedFunctionNames[0]}
	case mode == "ANY":
		rt.ToolChoice = &sdk.ToolChoice{Mode: sdk.ToolChoiceRequired}
	}
	var gen struct {
		ResponseJSONSchema json.RawMessage `json:"responseJsonSchema"`
		ResponseSchema     json.RawMessage `json:"responseSchema"`
	}
	if err := decodeField(fields, "generationConfig", &gen); err != nil {
		return rt, err
	}
	if s := gen.ResponseJSONSchema; s != nil {
		rt.ResponseFormat = &sdk.ResponseFormat{Schema: s}
	} else if s := gen.ResponseSchema; s != nil {
		rt.ResponseFormat = &sdk.ResponseFormat{Schema: s}
	}
	return rt, nil
}
