package gemini

import (
	"context"
	"encoding/json"
	"github.com/ctxhost/ctxhost/provider/gemini"
	"strings"
	"testing"

	"github.com/ctxhost/ctxhost/sdk"
	"github.com/ctxhost/ctxhost/sdk/assembly"
	"github.com/ctxhost/ctxhost/sdk/assembly/assemblytest"
)

// referenceRequest is buildRequest without the message cache: the body
// as one struct, encoded at once. The cached payload must equal it.
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
func referenceRequest(p assembly.Parts, model string) ([]byte, error) {
	body := gemini.Request{Model: gemini.ModelName(model), Contents: []*gemini.Content{}}
	if p.System != "" {
		body.SystemInstruction = &gemini.Content{Parts: []gemini.Part{gemini.TextPart(p.System)}}
	}
	add := func(role string, parts ...gemini.Part) {
		if n := len(body.Contents); n > 0 && body.Contents[n-1].Role == role {
			body.Contents[n-1].Parts = append(body.Contents[n-1].Parts, parts...)
			return
		}
		body.Contents = append(body.Contents, &gemini.Content{Role: role, Parts: parts})
	}
	toolNames := assembly.ToolNames(p.History)
	for _, m := range p.History {
		if assembly.IsBlank(m) {
			continue
		}
		switch m.Role {
		case sdk.RoleAssistant:
			add(gemini.RoleModel, gemini.ModelParts(m)...)
		case sdk.RoleTool:
			var response any = map[string]string{"content": m.Content}
			if c := strings.TrimSpace(m.Content); strings.HasPrefix(c, "{") && json.Valid([]byte(c)) {
				response = json.RawMessage(c) // a result that is a JSON object is the response
			}
			if field := m.Metadata[sdk.MetaResultField]; field != "" {
				response = map[string]string{field: m.Content}
			}
			add(gemini.RoleUser, gemini.Part{FunctionResponse: &gemini.FunctionResponse{
				ID:       m.ToolCallID,
				Name:     assembly.ToolName(m, toolNames),
				Response: response,
			}})
		case sdk.RoleUser:
			add(gemini.RoleUser, gemini.TextPart(assembly.UserText(m)))
		default:
			add(gemini.RoleUser, gemini.TextPart(m.Content))
		}
	}
	if block := p.ContextBlock(); block != "" {
		add(gemini.RoleUser, gemini.TextPart(block))
	}
	if p.Input != "" {
		add(gemini.RoleUser, gemini.TextPart(p.Input))
	}
	return assembly.Marshal(body)
}

// referenceText is buildText without the message cache.
func referenceText(p assembly.Parts) string {
	var s assembly.Sections
	s.Add("Instructions:", p.System)
	s.Add("Team task:", p.TeamTask)
	s.Add("Context:", assembly.ContextBody(p.Context))
	s.Add("Conversation so far:", assembly.RenderConversation(p.History))
	s.Add("User message:", p.Input)
	return s.String()
}

// TestCachedMatchesReference: with the message cache, both formats build
// the bytes the whole request encoded at once gives.
func TestCachedMatchesReference(t *testing.T) {
	t.Run("api", func(t *testing.T) {
		assemblytest.CheckIncremental(t, New(), FormatAPI, func(req sdk.AssembleRequest) (sdk.AssembleResult, error) {
			payload, err := referenceRequest(assembly.Split(req), req.Options[OptionModel])
			return sdk.AssembleResult{Payload: payload}, err
		})
	})
	t.Run("text", func(t *testing.T) {
		assemblytest.CheckIncremental(t, New(), FormatText, func(req sdk.AssembleRequest) (sdk.AssembleResult, error) {
			return sdk.AssembleResult{Payload: []byte(referenceText(assembly.Split(req)))}, nil
		})
	})
}

// BenchmarkAppendReference is BenchmarkAppend's api format encoded from
// scratch every turn (no message cache), for comparison.
func BenchmarkAppendReference(b *testing.B) {
	assemblytest.BenchmarkAppend(b, referenceAssembler{New()}, FormatAPI)
}

// referenceAssembler assembles the api format with referenceRequest.
type referenceAssembler struct{ *Assembler }

func (referenceAssembler) Assemble(_ context.Context, req sdk.AssembleRequest) (sdk.AssembleResult, error) {
	payload, err := referenceRequest(assembly.Split(req), req.Options[OptionModel])
	return sdk.AssembleResult{Payload: payload}, err
}
