package claude

import (
	"context"
	"github.com/ctxhost/ctxhost/provider/anthropic"
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
	body := anthropic.Request{Model: req.Options[OptionModel], MaxTokens: maxTokens, Messages: []*anthropic.Message{}}
	if p.System != "" {
		body.System = p.System
		if cache {
			b := anthropic.TextBlock(p.System)
			b.CacheControl = anthropic.Ephemeral
			body.System = []anthropic.Block{b}
		}
	}
	if body.Model == "" {
		body.Model = DefaultModel
	}
	add := func(role string, blocks ...anthropic.Block) {
		if n := len(body.Messages); n > 0 && body.Messages[n-1].Role == role {
			body.Messages[n-1].Content = append(body.Messages[n-1].Content, blocks...)
			return
		}
		if len(body.Messages) == 0 && role == anthropic.RoleAssistant {
			body.Messages = append(body.Messages, &anthropic.Message{Role: anthropic.RoleUser, Content: []anthropic.Block{anthropic.TextBlock(ContinuationText)}})
		}
		body.Messages = append(body.Messages, &anthropic.Message{Role: role, Content: blocks})
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
			add(anthropic.RoleAssistant, anthropic.AssistantBlocks(m)...)
			for _, tc := range m.ToolCalls {
				called[tc.ID] = true
			}
		case sdk.RoleTool:
			if !called[m.ToolCallID] { // its tool_use was cut off: keep it as text
				add(anthropic.RoleUser, anthropic.TextBlock(assembly.RenderMessage(m, toolNames)))
				continue
			}
			add(anthropic.RoleUser, anthropic.ToolResult(m))
		case sdk.RoleUser:
			add(anthropic.RoleUser, anthropic.TextBlock(assembly.UserText(m)))
		default:
			add(anthropic.RoleUser, anthropic.TextBlock(m.Content))
			markerMsg = len(body.Messages) - 1
			markerBlock = len(body.Messages[markerMsg].Content) - 1
		}
	}
	if cache && len(body.Messages) > 0 {
		if markerMsg >= 0 {
			body.Messages[markerMsg].Content[markerBlock].CacheControl = anthropic.Ephemeral
		}
		last := body.Messages[len(body.Messages)-1]
		last.Content[len(last.Content)-1].CacheControl = anthropic.Ephemeral
	}
	if b := p.ContextBlock(); b != "" {
		add(anthropic.RoleUser, anthropic.TextBlock(b))
	}
	if p.Input != "" {
		add(anthropic.RoleUser, anthropic.TextBlock(p.Input))
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
	if testing.Short() {
		t.Skip("slow: make test runs it, make test-short (-short) leaves it out")
	}
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
