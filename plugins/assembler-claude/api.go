package main

import (
	"encoding/json"
	"strconv"
	"strings"

	"github.com/ctxhost/ctxhost/sdk"
	"github.com/ctxhost/ctxhost/sdk/assembly"
)

// ContinuationText opens the messages when the history starts with an
// assistant turn: the Messages API wants the first message from the user.
const ContinuationText = "(continued)"

// Anthropic roles.
const (
	roleUser      = "user"
	roleAssistant = "assistant"
)

// messagesRequest is the JSON body of the Messages API; field order is
// fixed by the struct, so the bytes are deterministic.
type messagesRequest struct {
	Model     string     `json:"model"`
	MaxTokens int        `json:"max_tokens"`
	System    any        `json:"system,omitempty"` // a string, or text blocks when cached
	Messages  []*message `json:"messages"`
}

// cacheControl marks a prompt-caching breakpoint: the provider caches the
// prompt up to and including the block that carries it.
type cacheControl struct {
	Type string `json:"type"`
}

var ephemeral = &cacheControl{Type: "ephemeral"}

type message struct {
	Role    string  `json:"role"`
	Content []block `json:"content"`
}

// block is a content block: text, tool_use or tool_result.
type block struct {
	Type      string          `json:"type"`
	Text      *string         `json:"text,omitempty"`
	ID        string          `json:"id,omitempty"`
	Name      string          `json:"name,omitempty"`
	Input     json.RawMessage `json:"input,omitempty"`
	ToolUseID string          `json:"tool_use_id,omitempty"`
	Content   *string         `json:"content,omitempty"`
	// CacheControl marks a breakpoint (see buildRequest).
	CacheControl *cacheControl `json:"cache_control,omitempty"`
}

func textBlock(s string) block { return block{Type: "text", Text: &s} }

// buildRequest builds the Messages API body:
//   - system: the system body, left out when empty;
//   - messages: user turns as "user" text blocks, assistant turns as
//     "assistant" text then one tool_use block {id, name, input} per tool
//     call, tool results as tool_result blocks {tool_use_id, content} in a
//     user turn, system-role messages (e.g. the omitted-messages marker) as
//     user text blocks; then a final user turn with the team task and
//     supporting context as one text block and the input as another;
//   - consecutive turns of one role are merged into one message with
//     several blocks, so roles strictly alternate;
//   - a tool result whose tool_use is not in the history (cut off by a
//     window) becomes a user text block rendered as in the text formats,
//     as the API rejects a tool_result without its tool_use;
//   - when the first message would be the assistant's, a user message
//     with ContinuationText is put before it;
//   - messages with nothing to show (blank content, no tool calls) are
//     left out, as the API rejects empty text blocks;
//   - prompt-caching breakpoints (cache_control, unless the option cache
//     is "off"), at most three of the four the API allows, all on stable
//     content: the system text (then a list of one text block); the last
//     system-role history message, which is the omitted-messages marker
//     closing the compacted region; and the last block of the history,
//     the rolling tail, so the next turn reads the whole history from the
//     cache. The volatile final turn (context and input) comes after them.
func buildRequest(p assembly.Parts, req sdk.AssembleRequest) ([]byte, error) {
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

func assistantBlocks(m sdk.Message) []block {
	var blocks []block
	if strings.TrimSpace(m.Content) != "" {
		blocks = append(blocks, textBlock(m.Content))
	}
	for _, tc := range m.ToolCalls {
		blocks = append(blocks, block{Type: "tool_use", ID: tc.ID, Name: tc.Name, Input: assembly.ArgsObject(tc.Arguments)})
	}
	return blocks
}

// toolResult is a tool_result block; empty content is left out, as the
// API allows.
func toolResult(m sdk.Message) block {
	b := block{Type: "tool_result", ToolUseID: m.ToolCallID}
	if m.Content != "" {
		content := m.Content
		b.Content = &content
	}
	return b
}

// cacheOption reads the cache option: on unless "off".
func cacheOption(req sdk.AssembleRequest) (bool, error) {
	switch v := strings.TrimSpace(req.Options[OptionCache]); v {
	case "", "on":
		return true, nil
	case "off":
		return false, nil
	default:
		return false, sdk.InvalidArgs("option %s=%q: want on or off", OptionCache, v)
	}
}

func maxTokens(req sdk.AssembleRequest) (int, error) {
	if s, ok := req.Options[OptionMaxTokens]; ok {
		n, err := strconv.Atoi(strings.TrimSpace(s))
		if err != nil || n <= 0 {
			return 0, sdk.InvalidArgs("option %s=%q is not a positive integer", OptionMaxTokens, s)
		}
		return n, nil
	}
	if req.Budget.Reserved > 0 {
		return req.Budget.Reserved, nil
	}
	return DefaultMaxTokens, nil
}
