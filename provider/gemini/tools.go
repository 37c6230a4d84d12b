package gemini

import (
	"encoding/json"
	"strings"

	"github.com/ctxhost/ctxhost/provider"
	"github.com/ctxhost/ctxhost/sdk"
)

// ToolFields are the request fields that carry tools.
var ToolFields = []string{"tools", "toolConfig", "generationConfig"}

// DecodeTools reads function declarations (tools), the function calling
// mode (toolConfig) and a response schema (generationConfig).
func DecodeTools(tools, toolConfig, generationConfig json.RawMessage) (sdk.RequestTools, error) {
	var rt sdk.RequestTools
	var defs []struct {
		FunctionDeclarations []struct {
			Name                 string          `json:"name"`
			Description          string          `json:"description"`
			Parameters           json.RawMessage `json:"parameters"`
			ParametersJSONSchema json.RawMessage `json:"parametersJsonSchema"`
		} `json:"functionDeclarations"`
	}
	if err := provider.DecodeField(tools, "tools", &defs); err != nil {
		return rt, err
	}
	for _, t := range defs {
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
	if err := provider.DecodeField(toolConfig, "toolConfig", &cfg); err != nil {
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
	if err := provider.DecodeField(generationConfig, "generationConfig", &gen); err != nil {
		return rt, err
	}
	if s := gen.ResponseJSONSchema; s != nil {
		rt.ResponseFormat = &sdk.ResponseFormat{Schema: s}
	} else if s := gen.ResponseSchema; s != nil {
		rt.ResponseFormat = &sdk.ResponseFormat{Schema: s}
	}
	return rt, nil
}
