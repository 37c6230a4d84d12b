package claude

import (
	"context"
	"testing"

	"github.com/ctxhost/ctxhost/sdk"
	"github.com/ctxhost/ctxhost/sdk/assembly"
	"github.com/ctxhost/ctxhost/sdk/assembly/assemblytest"
)

// referenceRequest is buildRequest without the message cache: the body
// as one struct, encoded at once. The cached payload must equal it.
func referenceRequest(p assembly.Parts, req sdk.AssembleRequest) ([]byte, error) {
	maxTokens, err := maxTokens(req)
	if err != nil {
		return nil, err
	}
	cache, err := cacheOption(req)
	if err != nil {
		return nil, err
	}
	body := messagesRequest{Model: req.Options[OptionModel], MaxTokens: maxTokens, Messages: []*message{}}
	if p.System != "" {
		body.System = p.System
		if cache {
			b := textBlock(p.System)
			b.CacheControl = ephemeral
			body.System = []block{b}
		}
	}
	if body.Model == "" {
		body.Model = DefaultModel
	}
	add := func(role string, blocks ...block) {
		if n := len(body.Messages); n > 0 && body.Messages[n-1].Role == role {
			body.Messages[n-1].Content = append(body.Messages[n-1].Content, blocks...)
			return
		}
		if len(body.Messages) == 0 && role == roleAssistant {
			body.Messages = append(body.Messages, &message{Role: roleUser, Content: []block{textBlock(ContinuationText)}})
		}
		body.Messages = append(body.Messages, &message{Role: role, Content: blocks})
	}
	toolNames := assembly.ToolNames(p.History)
	called := map[string]bool{}
	markerMsg, markerBlock := -1, -1 // where the last system-role history message's block is
	for _, m := range p.History {
		if assembly.IsBlank(m) {
			continue
		}
		switch m.Role {
		case sdk.RoleAssistant:
			add(roleAssistant, assistantBlocks(m)...)
			for _, tc := range m.ToolCalls {
				called[tc.ID] = true
			}
		case sdk.RoleTool:
			if !called[m.ToolCallID] { // its tool_use was cut off: keep it as text
				add(roleUser, textBlock(assembly.RenderMessage(m, toolNames)))
				continue
			}
			add(roleUser, toolResult(m))
		case sdk.RoleUser:
			add(roleUser, textBlock(assembly.UserText(m)))
		default:
			add(roleUser, textBlock(m.Content))
			markerMsg = len(body.Messages) - 1
			markerBlock = len(body.Messages[markerMsg].Content) - 1
		}
	}
	if cache && len(body.Messages) > 0 {
		if markerMsg >= 0 {
			body.Messages[markerMsg].Content[markerBlock].CacheControl = ephemeral
		}
		last := body.Messages[len(body.Messages)-1]
		last.Content[len(last.Content)-1].CacheControl = ephemeral
	}
	if b := p.ContextBlock(); b != "" {
		add(roleUser, textBlock(b))
	}
	if p.Input != "" {
		add(roleUser, textBlock(p.Input))
	}
	return assembly.Marshal(body)
}

// referencePrompt is buildPrompt without the message cache.
func referencePrompt(p assembly.Parts) string {
	var s assembly.Sections
	s.Add(assembly.Bracket("TEAM_TASK"), p.TeamTask)
	s.Add(assembly.Bracket("CONTEXT"), assembly.SystemBody(assembly.ContextBody(p.Context), assembly.RenderConversation(p.History)))
	s.Add(assembly.Bracket("MESSAGE"), p.Input)
	return s.String()
}

// TestCachedMatchesReference: with the message cache, both formats build
// the bytes the whole request encoded at once gives.
func TestCachedMatchesReference(t *testing.T) {
	for _, opts := range []map[string]string{nil, {OptionCache: "off"}} {
		t.Run("api/"+opts[OptionCache], func(t *testing.T) {
			assemblytest.CheckIncremental(t, withOptions{New(), opts}, FormatAPI, func(req sdk.AssembleRequest) (sdk.AssembleResult, error) {
				req.Options = opts
				payload, err := referenceRequest(assembly.Split(req), req)
				return sdk.AssembleResult{Payload: payload}, err
			})
		})
	}
	t.Run("cli", func(t *testing.T) {
		assemblytest.CheckIncremental(t, New(), FormatCLI, func(req sdk.AssembleRequest) (sdk.AssembleResult, error) {
			p := assembly.Split(req)
			return sdk.AssembleResult{Payload: []byte(referencePrompt(p)), System: p.System, HasSystem: p.System != ""}, nil
		})
	})
}

// withOptions is an assembler whose requests carry options.
type withOptions struct {
	*Assembler
	options map[string]string
}

func (w withOptions) Assemble(ctx context.Context, req sdk.AssembleRequest) (sdk.AssembleResult, error) {
	req.Options = w.options
	return w.Assembler.Assemble(ctx, req)
}
