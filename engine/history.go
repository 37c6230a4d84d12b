package engine

import (
	"fmt"
	"strings"

	"github.com/ctxhost/ctxhost/host/history"
)

// HistoryEntry is one stored message with the kind it was given and how
// the context shows it (Shown: one of the Shown values).
type HistoryEntry = history.EntryInfo

// How the context shows a stored message (HistoryEntry.Shown).
const (
	ShownWhole    = history.ShownWhole
	ShownMasked   = history.ShownMasked
	ShownCut      = history.ShownCut
	ShownStripped = history.ShownStripped
	ShownOmitted  = history.ShownOmitted
	// ShownSummarized: omitted, and the summary shown in its place stands
	// for it.
	ShownSummarized = history.ShownSummarized
)

// InferOff is the kind inference that gives unlabelled messages the kind
// their role gives (Session.KindInference).
const InferOff = history.InferOff

// HistoryQuery selects stored messages: by ids, else the positions
// [From, To) (To 0: the end); Query keeps those whose text contains it
// (case-insensitive); Limit caps the answer (0: none).
type HistoryQuery struct {
	IDs      []string
	From, To int
	Query    string
	Limit    int
}

// History returns the stored messages q selects, as given (also those the
// context shows masked, cut, stripped or omitted: their originals), and
// the number of messages in the history. An unknown id is an error.
func (s *Session) History(q HistoryQuery) ([]HistoryEntry, int, error) {
	all := s.host.Conversation().HistoryEntries(0, int(^uint(0)>>1))
	if len(q.IDs) > 0 {
		byID := make(map[string]history.EntryInfo, len(all))
		for _, e := range all {
			byID[e.Message.ID] = e
		}
		out := make([]history.EntryInfo, 0, len(q.IDs))
		for _, id := range q.IDs {
			e, ok := byID[id]
			if !ok {
				return nil, len(all), fmt.Errorf("history: no message with id %q", id)
			}
			out = append(out, e)
		}
		return out, len(all), nil
	}
	if q.From < 0 || q.To < 0 || q.Limit < 0 {
		return nil, len(all), fmt.Errorf("history: negative range or limit")
	}
	to := q.To
	if to == 0 || to > len(all) {
		to = len(all)
	}
	var out []history.EntryInfo
	needle := strings.ToLower(q.Query)
	for _, e := range all[min(q.From, to):to] {
		if needle != "" && !strings.Contains(strings.ToLower(e.Message.Text()), needle) {
			continue
		}
		out = append(out, e)
		if q.Limit > 0 && len(out) == q.Limit {
			break
		}
	}
	return out, len(all), nil
}

// FormatHistory renders the stored messages (view false) or the
// compacted view the next payload carries (view true) as text, one
// message per entry with its id.
func (s *Session) FormatHistory(view bool) string {
	return s.host.Conversation().FormatHistory(history.FormatOptions{IncludeIDs: true, IncludeToolCalls: true, View: view})
}

// ClearHistory removes every message of the history.
func (s *Session) ClearHistory() error { return s.host.Conversation().ClearHistory() }
