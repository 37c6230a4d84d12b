package host

import (
	"encoding/json"
	"fmt"

	"github.com/ctxhost/ctxhost/host/history"
)

// SavedChange is what one stored save of a session did, read from the
// stored bytes (an event, or a snapshot in its place): what an event
// stream shows of each durable version.
type SavedChange struct {
	// Snapshot: the save is the whole state (the store folded the log
	// into it, or the save was written whole); its changes are not
	// itemized.
	Snapshot bool `json:"snapshot,omitempty"`
	// MessagesAdded are the ids of the messages appended, in order.
	MessagesAdded []string `json:"messages_added,omitempty"`
	// HistoryCleared: every message was removed.
	HistoryCleared bool `json:"history_cleared,omitempty"`
	// Compaction are the history's compaction steps (mask, compact,
	// compact_late, cut, cut_unpinned, cut_others, yield, give_way, give_way_task) with
	// their counts.
	Compaction []HistoryStep `json:"compaction,omitempty"`
	// Summaries are the summaries the history took: the messages each
	// stands for, the model that made it and what its call cost.
	Summaries []SavedSummary `json:"summaries,omitempty"`
	// TextsSet names the core texts set (system, instructions, input,
	// tools, team_task).
	TextsSet []string `json:"texts_set,omitempty"`
	// PluginCalls are the plugin calls recorded: op applied, compaction
	// asked, prepared notified.
	PluginCalls []PluginCall `json:"plugin_calls,omitempty"`
	// StrategyChanged: the strategy was set.
	StrategyChanged bool `json:"strategy_changed,omitempty"`
	// Turns counts the turns prepared in the session's life after the
	// save, and Used is the calibrated context size of the last one.
	Turns int `json:"turns"`
	Used  int `json:"used"`
	// PromptReported and CompletionTotal are the usage the provider
	// reported, as of the save.
	PromptReported  int `json:"prompt_reported"`
	CompletionTotal int `json:"completion_total"`
}

// HistoryStep is one change a compaction made to the history.
type HistoryStep struct {
	Kind string `json:"kind"`
	N    int    `json:"n"`
}

// SavedSummary is one summary a save recorded.
type SavedSummary struct {
	Covers       string `json:"covers"`
	Count        int    `json:"count"`
	Model        string `json:"model,omitempty"`
	InputTokens  int    `json:"input_tokens,omitempty"`
	OutputTokens int    `json:"output_tokens,omitempty"`
}

// PluginCall is one plugin call a save recorded.
type PluginCall struct {
	Plugin string `json:"plugin"`
	Call   string `json:"call"` // apply, compact or prepared
	Op     string `json:"op,omitempty"`
}

// DescribeSaved reads what the stored bytes of one save did; snapshot
// tells that data is a snapshot (the store's first record).
func DescribeSaved(data []byte, snapshot bool) (SavedChange, error) {
	if snapshot {
		var st struct {
			Usage    usage         `json:"usage"`
			Pressure pressureState `json:"pressure"`
		}
		if err := json.Unmarshal(data, &st); err != nil {
			return SavedChange{}, fmt.Errorf("stored snapshot: %w", err)
		}
		p := st.Pressure.restored()
		return SavedChange{Snapshot: true, Turns: p.Turns, Used: p.LastUsed,
			PromptReported: st.Usage.ReportedPrompt, CompletionTotal: st.Usage.CompletionTotal}, nil
	}
	var ev storedEvent
	if err := json.Unmarshal(data, &ev); err != nil {
		return SavedChange{}, fmt.Errorf("stored event: %w", err)
	}
	p := ev.Pressure.restored()
	c := SavedChange{Turns: p.Turns, Used: p.LastUsed, PromptReported: ev.Usage.ReportedPrompt, CompletionTotal: ev.Usage.CompletionTotal}
	for _, op := range ev.Ops {
		switch {
		case op.History != nil && op.History.Kind == history.OpAdd && op.History.Message != nil:
			c.MessagesAdded = append(c.MessagesAdded, op.History.Message.ID)
		case op.History != nil && op.History.Kind == history.OpClear:
			c.HistoryCleared = true
		case op.History != nil && op.History.Kind == history.OpSummary && op.History.Summary != nil:
			s := op.History.Summary
			c.Summaries = append(c.Summaries, SavedSummary{Covers: s.Covers, Count: s.Count, Model: s.Model,
				InputTokens: s.InputTokens, OutputTokens: s.OutputTokens})
		case op.History != nil:
			c.Compaction = append(c.Compaction, HistoryStep{Kind: op.History.Kind, N: op.History.N})
		case op.Set != "":
			c.TextsSet = append(c.TextsSet, op.Set)
		case op.Strategy != nil:
			c.StrategyChanged = true
		case op.Apply != nil:
			c.PluginCalls = append(c.PluginCalls, PluginCall{Plugin: op.Plugin, Call: "apply", Op: op.Apply.Op})
		case op.Compact != nil:
			c.PluginCalls = append(c.PluginCalls, PluginCall{Plugin: op.Plugin, Call: "compact"})
		case op.Prepared != nil:
			c.PluginCalls = append(c.PluginCalls, PluginCall{Plugin: op.Plugin, Call: "prepared"})
		}
	}
	return c, nil
}
