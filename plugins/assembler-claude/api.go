package main

import (
	"bytes"
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
//
// Each history message's blocks are encoded once per stream (apiCache)
// and joined, the two breakpoints encoded again with cache_control; the
// bytes are those of the whole body encoded at once.
func buildRequest(p assembly.Parts, req sdk.AssembleRequest) ([]byte, error) {
	maxTokens, err := maxTokens(req)
	if err != nil {
		return nil, err
	}
	cache, err := cacheOption(req)
	if err != nil {
		return nil, err
	}
	model := req.Options[OptionModel]
	if model == "" {
		model = DefaultModel
	}
	frags := apiCache.Derive(req, p.History, deriveFragment)
	marker, last, size := -1, -1, 128+len(p.System)+len(p.Input)
	for i, f := range frags {
		if f.err != nil {
			return nil, f.err
		}
		if f.role != "" {
			last = i
			if f.marker {
				marker = i
			}
		}
		for _, e := range f.enc {
			size += len(e) + 1
		}
	}
	var b bytes.Buffer
	b.Grow(size)
	b.WriteString("{")
	if err := writeField(&b, "model", model); err != nil {
		return nil, err
	}
	b.WriteString(`"max_tokens":` + strconv.Itoa(maxTokens) + ",")
	if p.System != "" {
		var system any = p.System
		if cache {
			blk := textBlock(p.System)
			blk.CacheControl = ephemeral
			system = []block{blk}
		}
		if err := writeField(&b, "system", system); err != nil {
			return nil, err
		}
	}
	b.WriteString(`"messages":[`)
	w := messageWriter{b: &b}
	for i, f := range frags {
		if f.role == "" {
			continue
		}
		for k, e := range f.enc {
			if cache && (i == marker || i == last && k == len(f.enc)-1) {
				// A breakpoint: the marker closing the compacted region, or
				// the rolling tail of the history.
				blk := f.blocks[k]
				blk.CacheControl = ephemeral
				if e, err = assembly.Marshal(blk); err != nil {
					return nil, err
				}
			}
			w.add(f.role, e)
		}
	}
	for _, text := range []string{p.ContextBlock(), p.Input} {
		if text != "" {
			e, err := assembly.Marshal(textBlock(text))
			if err != nil {
				return nil, err
			}
			w.add(roleUser, e)
		}
	}
	w.close()
	b.WriteString("]}")
	return b.Bytes(), nil
}

// messageWriter writes the messages array's elements, merging blocks of
// one role into one message and opening with a ContinuationText user
// message when the first would be the assistant's.
type messageWriter struct {
	b    *bytes.Buffer
	role string // the role of the message open, "" before the first
}

// add writes one encoded block of role.
func (w *messageWriter) add(role string, enc []byte) {
	switch {
	case role == w.role:
		w.b.WriteString(",")
	case w.role == "" && role == roleAssistant:
		cont, _ := assembly.Marshal(textBlock(ContinuationText)) // a string always encodes
		w.b.WriteString(`{"role":"user","content":[`)
		w.b.Write(cont)
		w.b.WriteString(`]},`)
		fallthrough
	case w.role == "":
		w.b.WriteString(`{"role":"` + role + `","content":[`)
	default:
		w.b.WriteString(`]},{"role":"` + role + `","content":[`)
	}
	w.role = role
	w.b.Write(enc)
}

// close ends the last message.
func (w *messageWriter) close() {
	if w.role != "" {
		w.b.WriteString("]}")
	}
}

// writeField writes `"name":` and v encoded, then a comma.
func writeField(b *bytes.Buffer, name string, v any) error {
	enc, err := assembly.Marshal(v)
	if err != nil {
		return err
	}
	b.WriteString(`"` + name + `":`)
	b.Write(enc)
	b.WriteString(",")
	return nil
}

// fragment is one history message's blocks, each also encoded; role is
// empty when the message shows nothing; marker: a system-role message
// (the omitted-messages marker is one), a breakpoint when it is the last.
type fragment struct {
	role   string
	blocks []block
	enc    [][]byte
	marker bool
	err    error
}

// apiCache keeps each stream's fragments (see assembly.MessageCache).
var apiCache = assembly.NewMessageCache[fragment](0)

// deriveFragment builds and encodes one history message's blocks.
func deriveFragment(i int, m sdk.Message, ctx *assembly.MessageContext) fragment {
	if assembly.IsBlank(m) {
		return fragment{}
	}
	f := fragment{role: roleUser}
	switch m.Role {
	case sdk.RoleAssistant:
		f.role, f.blocks = roleAssistant, assistantBlocks(m)
	case sdk.RoleTool:
		if at := ctx.FirstCall(m.ToolCallID, sdk.RoleAssistant); at < 0 || at >= i { // its tool_use was cut off: keep it as text
			f.blocks = []block{textBlock(ctx.RenderMessage(m))}
		} else {
			f.blocks = []block{toolResult(m)}
		}
	case sdk.RoleUser:
		f.blocks = []block{textBlock(assembly.UserText(m))}
	default:
		f.blocks, f.marker = []block{textBlock(m.Content)}, true
	}
	f.enc = make([][]byte, len(f.blocks))
	for k, blk := range f.blocks {
		enc, err := assembly.Marshal(blk)
		if err != nil {
			return fragment{err: err}
		}
		f.enc[k] = enc
	}
	return f
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
