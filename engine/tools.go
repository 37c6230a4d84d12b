package engine

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
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
