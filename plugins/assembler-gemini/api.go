package main

import (
	"encoding/json"
	"strings"

	"github.com/ctxhost/ctxhost/sdk"
	"github.com/ctxhost/ctxhost/sdk/assembly"
)

// Gemini roles.
const (
	roleUser  = "user"
	roleModel = "model"
)

// generateContentRequest is the JSON body of generateContent; field order
// is fixed by the struct, so the bytes are deterministic.
type generateContentRequest struct {
	Model             string     `json:"model,omitempty"`
	SystemInstruction *content   `json:"systemInstruction,omitempty"`
	Contents          []*content `json:"contents"`
}

type content struct {
	Role  string `json:"role,omitempty"`
	Parts []part `json:"parts"`
}

type part struct {
	Text             *string           `json:"text,omitempty"`
	FunctionCall     *functionCall     `json:"functionCall,omitempty"`
	FunctionResponse *functionResponse `json:"functionResponse,omitempty"`
}

type functionCall struct {
	ID   string          `json:"id,omitempty"`
	Name string          `json:"name"`
	Args json.RawMessage `json:"args"`
}

type functionResponse struct {
	ID       string         `json:"id,omitempty"`
	Name     string         `json:"name"`
	Response resultEnvelope `json:"response"`
}

type resultEnvelope struct {
	Content string `json:"content"`
}

func textPart(s string) part { return part{Text: &s} }

// buildRequest builds the generateContent body:
//   - systemInstruction: the system body, left out when empty;
//   - contents: the history, user turns as role "user", assistant turns as
//     role "model" (text, then one functionCall part per tool call), tool
//     results as functionResponse parts {name, response: {content}} in a
//     user turn, system-role messages (e.g. the omitted-messages marker) as
//     user text parts; then a final user turn with the team task and
//     supporting context as one text part and the input as another;
//   - consecutive turns of one role are merged into one content with
//     several parts, as Gemini wants alternating turns;
//   - messages with nothing to show (blank content, no tool calls) are
//     left out, as Gemini rejects empty parts.
func buildRequest(p assembly.Parts, model string) ([]byte, error) {
	body := generateContentRequest{Model: modelName(model), Contents: []*content{}}
	if p.System != "" {
		body.SystemInstruction = &content{Parts: []part{textPart(p.System)}}
	}
	add := func(role string, parts ...part) {
		if n := len(body.Contents); n > 0 && body.Contents[n-1].Role == role {
			body.Contents[n-1].Parts = append(body.Contents[n-1].Parts, parts...)
			return
		}
		body.Contents = append(body.Contents, &content{Role: role, Parts: parts})
	}
	toolNames := assembly.ToolNames(p.History)
	for _, m := range p.History {
		if assembly.IsBlank(m) {
			continue
		}
		switch m.Role {
		case sdk.RoleAssistant:
			add(roleModel, modelParts(m)...)
		case sdk.RoleTool:
			add(roleUser, part{FunctionResponse: &functionResponse{
				ID:       m.ToolCallID,
				Name:     assembly.ToolName(m, toolNames),
				Response: resultEnvelope{Content: m.Content},
			}})
		case sdk.RoleUser:
			add(roleUser, textPart(assembly.UserText(m)))
		default:
			add(roleUser, textPart(m.Content))
		}
	}
	if block := p.ContextBlock(); block != "" {
		add(roleUser, textPart(block))
	}
	if p.Input != "" {
		add(roleUser, textPart(p.Input))
	}
	return assembly.Marshal(body)
}

func modelParts(m sdk.Message) []part {
	var parts []part
	if strings.TrimSpace(m.Content) != "" {
		parts = append(parts, textPart(m.Content))
	}
	for _, tc := range m.ToolCalls {
		parts = append(parts, part{FunctionCall: &functionCall{
			ID: tc.ID, Name: tc.Name, Args: assembly.ArgsObject(tc.Arguments),
		}})
	}
	return parts
}

// modelName is the resource name of a model: "models/" + the id, unless
// it already carries the prefix; empty stays empty.
func modelName(model string) string {
	model = strings.TrimSpace(model)
	if model == "" || strings.HasPrefix(model, "models/") {
		return model
	}
	return "models/" + model
}
