package codex

import (
	"github.com/ctxhost/ctxhost/provider/openai"
	"strings"
	"testing"

	"github.com/ctxhost/ctxhost/sdk"
	"github.com/ctxhost/ctxhost/sdk/assembly"
	"github.com/ctxhost/ctxhost/sdk/assembly/assemblytest"
)

// referenceRequest is buildRequest without the message cache: the body
// as one struct, encoded at once. The cached payload must equal it.
func referenceRequest(p assembly.Parts, model, cacheKey string) ([]byte, error) {
	if model = strings.TrimSpace(model); model == "" {
		model = DefaultModel
	}
	body := openai.Request{Model: model, PromptCacheKey: strings.TrimSpace(cacheKey)}
	if p.System != "" {
		body.Messages = append(body.Messages, openai.Message{Role: sdk.RoleSystem, Content: p.System})
	}
	toolNames := assembly.ToolNames(p.History)
	called := map[string]bool{}
	for _, m := range p.History {
		if assembly.IsBlank(m) {
			continue
		}
		for _, tc := range m.ToolCalls {
			called[tc.ID] = true
		}
		if m.Role == sdk.RoleTool && !called[m.ToolCallID] { // its call was cut off: keep it as text
			body.Messages = append(body.Messages, openai.Message{Role: sdk.RoleUser, Content: assembly.RenderMessage(m, toolNames)})
			continue
		}
		body.Messages = append(body.Messages, openai.HistoryMessage(m))
	}
	if last := openai.FinalContent(p.ContextBlock(), p.Input); last != nil {
		body.Messages = append(body.Messages, openai.Message{Role: sdk.RoleUser, Content: last})
	} else if len(body.Messages) == 0 {
		body.Messages = append(body.Messages, openai.Message{Role: sdk.RoleUser, Content: ""})
	}
	return assembly.Marshal(body)
}

// referencePrompt is buildPrompt without the message cache.
func referencePrompt(p assembly.Parts) string {
	var s assembly.Sections
	s.Add(assembly.Bracket("SYSTEM"), p.System)
	s.Add(assembly.Bracket("TEAM_TASK"), p.TeamTask)
	s.Add(assembly.Bracket("CONTEXT"), assembly.SystemBody(assembly.ContextBody(p.Context), assembly.RenderConversation(p.History)))
	s.Add(assembly.Bracket("MESSAGE"), p.Input)
	return s.String()
}

// TestCachedMatchesReference: with the message cache, both formats build
// the bytes the whole request encoded at once gives.
func TestCachedMatchesReference(t *testing.T) {
	t.Run("api", func(t *testing.T) {
		assemblytest.CheckIncremental(t, New(), FormatAPI, func(req sdk.AssembleRequest) (sdk.AssembleResult, error) {
			payload, err := referenceRequest(assembly.Split(req), req.Options[OptionModel], req.Options[OptionPromptCacheKey])
			return sdk.AssembleResult{Payload: payload}, err
		})
	})
	t.Run("cli", func(t *testing.T) {
		assemblytest.CheckIncremental(t, New(), FormatCLI, func(req sdk.AssembleRequest) (sdk.AssembleResult, error) {
			return sdk.AssembleResult{Payload: []byte(referencePrompt(assembly.Split(req)))}, nil
		})
	})
}
