package engine

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/ctxhost/ctxhost/config"
	"github.com/ctxhost/ctxhost/sdk"
)

// The memory tools: ctxhost answers them itself, for the session whose
// request carries them, on the blocks it sees (a label names the block
// its prepares show: the session's over its agent's over a group's).
const (
	MemoryViewTool    = "ctxhost_memory_view"
	MemoryAppendTool  = "ctxhost_memory_append"
	MemoryReplaceTool = "ctxhost_memory_replace"
)

// MemoryTools are the memory tools' definitions.
func MemoryTools() []sdk.ToolDefinition {
	return []sdk.ToolDefinition{
		{Name: MemoryViewTool, Description: "Show your memory blocks (all of them, or the one a label names) with their limits.",
			Parameters: json.RawMessage(`{"type":"object","properties":{"label":{"type":"string","description":"the block's label; empty: every block"}}}`)},
		{Name: MemoryAppendTool, Description: "Add a line to one of your memory blocks; it stays in your context across turns and sessions, within the block's limit.",
			Parameters: json.RawMessage(`{"type":"object","properties":{"label":{"type":"string","description":"the block's label"},` +
				`"text":{"type":"string","description":"the line to add"}},"required":["label","text"]}`)},
		{Name: MemoryReplaceTool, Description: "Replace text that occurs once in one of your memory blocks (an empty new_text deletes it).",
			Parameters: json.RawMessage(`{"type":"object","properties":{"label":{"type":"string","description":"the block's label"},` +
				`"old_text":{"type":"string","description":"the exact text to replace; it must occur once"},` +
				`"new_text":{"type":"string","description":"what replaces it"}},"required":["label","old_text","new_text"]}`)},
	}
}

// IsOwnTool tells whether ctxhost answers tool name itself: the recall
// tool and the memory tools.
func IsOwnTool(name string) bool {
	return name == sdk.RecallToolName || name == MemoryViewTool || name == MemoryAppendTool || name == MemoryReplaceTool
}

// ToolResult is the answer to one of ctxhost's own tools: the text the
// model reads as the tool's result; IsError marks a refusal the model
// should act on (a block over its limit, a read-only block, an unknown
// label or id).
type ToolResult struct {
	Text    string
	IsError bool
}

// RunTool answers one of ctxhost's own tools called by the model with
// args (the call's JSON arguments). Refusals are results (IsError);
// err is a failure to answer at all (the store did not answer).
func (s *Session) RunTool(ctx context.Context, name string, args json.RawMessage) (ToolResult, error) {
	var a struct {
		Label   string   `json:"label"`
		Text    string   `json:"text"`
		OldText string   `json:"old_text"`
		NewText string   `json:"new_text"`
		IDs     []string `json:"ids"`
		Query   string   `json:"query"`
	}
	if len(args) > 0 && string(args) != "null" {
		if err := json.Unmarshal(args, &a); err != nil {
			return refusal("the arguments are not a JSON object: %v", err), nil
		}
	}
	if name == sdk.RecallToolName {
		return s.recall(a.IDs, a.Query), nil
	}
	if !IsOwnTool(name) {
		return ToolResult{}, fmt.Errorf("tool %q: %w", name, ErrUnknownOp)
	}
	if s.memory == nil {
		return refusal("memory tools need a conversation profile"), nil
	}
	visible, err := s.engine.MemoryBlocks(ctx, s.memory.scopes("")...)
	if err != nil {
		return ToolResult{}, err
	}
	visible = VisibleBlocks(visible)
	if name == MemoryViewTool {
		return viewBlocks(visible, a.Label), nil
	}
	i := slices.IndexFunc(visible, func(b MemoryBlock) bool { return b.Label == a.Label })
	if i < 0 {
		return refusal("no memory block %q; your blocks: %s", a.Label, labels(visible)), nil
	}
	edit := AppendEdit(a.Text, true)
	if name == MemoryReplaceTool {
		edit = ReplaceEdit(a.OldText, a.NewText, true)
	}
	b, err := s.engine.EditMemoryBlock(ctx, visible[i].Scope, a.Label, edit, 0)
	switch {
	case errors.Is(err, ErrBlockOverLimit), errors.Is(err, ErrBlockReadOnly), errors.Is(err, ErrInvalidBlock), errors.Is(err, ErrBlockNotFound):
		return refusal("%v", err), nil
	case err != nil:
		return ToolResult{}, err
	}
	count, err := s.engine.MemoryCounter()
	if err != nil {
		return ToolResult{}, err
	}
	return ToolResult{Text: fmt.Sprintf("Memory block %q updated (version %d, %d of %d %s).", b.Label, b.Version, b.Size(count), b.Limit, b.Unit)}, nil
}

func refusal(format string, a ...any) ToolResult {
	return ToolResult{Text: fmt.Sprintf(format, a...), IsError: true}
}

func labels(blocks []MemoryBlock) string {
	if len(blocks) == 0 {
		return "none"
	}
	names := make([]string, len(blocks))
	for i, b := range blocks {
		names[i] = b.Label
	}
	return strings.Join(names, ", ")
}

// viewBlocks is the view tool's answer: each block (or the one label
// names) with its scope, limit and value.
func viewBlocks(blocks []MemoryBlock, label string) ToolResult {
	var b strings.Builder
	for _, blk := range blocks {
		if label != "" && blk.Label != label {
			continue
		}
		ro := ""
		if blk.ReadOnly {
			ro = ", read-only"
		}
		fmt.Fprintf(&b, "[%s] (%s, limit %d %s%s)\n%s\n\n", blk.Label, blk.Scope, blk.Limit, blk.Unit, ro, blk.Value)
	}
	if b.Len() == 0 {
		if label != "" {
			return refusal("no memory block %q; your blocks: %s", label, labels(blocks))
		}
		return ToolResult{Text: "You have no memory blocks."}
	}
	return ToolResult{Text: strings.TrimRight(b.String(), "\n")}
}

// recall is the recall tool's answer: the messages asked for, whole.
func (s *Session) recall(ids []string, query string) ToolResult {
	if len(ids) == 0 && query == "" {
		return refusal("give ids (as the placeholders name them) or a query")
	}
	entries, _, err := s.History(HistoryQuery{IDs: ids, Query: query, Limit: 20})
	if err != nil {
		return refusal("%v", err)
	}
	if len(entries) == 0 {
		return ToolResult{Text: fmt.Sprintf("No message contains %q.", query)}
	}
	var b strings.Builder
	for _, e := range entries {
		fmt.Fprintf(&b, "[%s] %s: %s\n\n", e.Message.ID, e.Message.Role, e.Message.Text())
	}
	return ToolResult{Text: strings.TrimRight(b.String(), "\n")}
}

// ownTools are the tools beyond the recall tool that a profile's
// requests carry: the memory tools when its memory block asks for them.
func ownTools(c *config.Context) []sdk.ToolDefinition {
	if c.Memory.Tools {
		return MemoryTools()
	}
	return nil
}

// Metadata keys of the turns AnswerToolCalls records.
const (
	// MetaOwnCalls, on an assistant message, lists the ids of its calls
	// ctxhost answered itself (separated by spaces).
	MetaOwnCalls = "ctxhost_own_calls"
	// MetaOwnResult marks (value "true") a tool message that is ctxhost's
	// answer to one of its own tools.
	MetaOwnResult = "ctxhost_own_result"
	// MetaHidden marks (value "true") an assistant message its caller
	// never saw: a turn the call path answered itself before calling the
	// model again.
	MetaHidden = "ctxhost_hidden"
)

// AnswerToolCalls answers the calls of ctxhost's own tools in m, an
// assistant turn the model gave, and records m followed by one tool
// message per call answered, in order, saved in one store write. own
// tells which tool names ctxhost answers (nil: IsOwnTool); the other
// calls are left for the caller to answer. hidden marks m as a turn its
// caller never saw (MetaHidden). A refusal is a result (IsError, and the
// tool message is marked sdk.MetaToolError); err is a failure to answer
// (nothing recorded) or to save (as with Batch, the caller then unloads
// the session); a memory edit a tool made before the failure stays. It
// returns m as recorded and the results, one per call answered.
func (s *Session) AnswerToolCalls(ctx context.Context, m sdk.Message, own func(string) bool, hidden bool) (sdk.Message, []ToolResult, error) {
	if own == nil {
		own = IsOwnTool
	}
	var results []ToolResult
	var replies []sdk.Message
	var ids []string
	for _, tc := range m.ToolCalls {
		if !own(tc.Name) {
			continue
		}
		res, err := s.RunTool(ctx, tc.Name, json.RawMessage(tc.Arguments))
		if err != nil {
			return sdk.Message{}, nil, fmt.Errorf("answer tool %s (call %s): %w", tc.Name, tc.ID, err)
		}
		results = append(results, res)
		ids = append(ids, tc.ID)
		reply := sdk.Message{Role: sdk.RoleTool, ToolCallID: tc.ID, ToolName: tc.Name, Content: res.Text,
			Metadata: map[string]string{MetaOwnResult: "true"}}
		if res.IsError {
			reply.Metadata[sdk.MetaToolError] = "true"
		}
		replies = append(replies, reply)
	}
	m.Metadata = maps.Clone(m.Metadata)
	if m.Metadata == nil {
		m.Metadata = map[string]string{}
	}
	if len(ids) > 0 {
		m.Metadata[MetaOwnCalls] = strings.Join(ids, " ")
	}
	if hidden {
		m.Metadata[MetaHidden] = "true"
	}
	if len(m.Metadata) == 0 {
		m.Metadata = nil
	}
	var added []sdk.Message
	err := s.Batch(func() error {
		var err error
		added, err = s.AddMessages(append([]sdk.Message{m}, replies...))
		return err
	})
	if err != nil {
		return sdk.Message{}, nil, fmt.Errorf("record the tool calls: %w", err)
	}
	return added[0], results, nil
}

// RunToolCall answers call, a call of one of ctxhost's own tools, and
// records it as an assistant turn of that one call followed by the tool
// message of its result (see AnswerToolCalls).
func (s *Session) RunToolCall(ctx context.Context, call sdk.ToolCall) (ToolResult, error) {
	if !IsOwnTool(call.Name) {
		return ToolResult{}, fmt.Errorf("tool %q: %w", call.Name, ErrUnknownOp)
	}
	_, res, err := s.AnswerToolCalls(ctx, sdk.Message{Role: sdk.RoleAssistant, ToolCalls: []sdk.ToolCall{call}}, nil, false)
	if err != nil {
		return ToolResult{}, err
	}
	return res[0], nil
}

// OwnCallIDs are the ids of the calls of m ctxhost answered itself
// (MetaOwnCalls).
func OwnCallIDs(m *sdk.Message) []string { return strings.Fields(m.Metadata[MetaOwnCalls]) }

// OwnTools are the definitions of the tools ctxhost answers itself that
// the session's requests carry (the recall tool with recall_tool, the
// memory tools with memory { tools = true }); none on a fresh profile.
func (s *Session) OwnTools() []sdk.ToolDefinition {
	if s.IsFresh() {
		return nil
	}
	cfg := s.host.Config()
	var out []sdk.ToolDefinition
	if cfg.RecallTool {
		out = append(out, sdk.RecallTool())
	}
	return append(out, cfg.OwnTools...)
}
