package team

import (
	"fmt"

	"github.com/ctxhost/ctxhost/sdk"
)

// SnapshotVersion is the version of Snapshot this package writes and reads.
const SnapshotVersion = 1

// Snapshot is the serializable state of a Team: encode it as
// JSON to persist a conversation.
type Snapshot struct {
	Version  int           `json:"version"`
	Messages []sdk.Message `json:"messages"`
	TeamTask *string       `json:"team_task"`
	NextSeq  int           `json:"next_seq"`
}

// ExportSnapshot returns the team's messages and team task.
func (t *Team) ExportSnapshot() Snapshot {
	t.mu.Lock()
	defer t.mu.Unlock()
	s := Snapshot{Version: SnapshotVersion, Messages: append([]sdk.Message{}, t.messages...), NextSeq: t.nextSeq}
	if t.teamTask != nil {
		task := *t.teamTask
		s.TeamTask = &task
	}
	return s
}

// ImportSnapshot replaces the team's state with s. Every message is
// validated as AddMessage does and must have a unique, non-empty id; on
// any error nothing changes.
func (t *Team) ImportSnapshot(s Snapshot) error {
	if s.Version != SnapshotVersion {
		return fmt.Errorf("import team snapshot: version %d, want %d", s.Version, SnapshotVersion)
	}
	ids := map[string]bool{}
	msgs := make([]sdk.Message, 0, len(s.Messages))
	for i, m := range s.Messages {
		if err := validateMessage(&m); err != nil {
			return fmt.Errorf("import team snapshot: message %d: %w", i, err)
		}
		if m.ID == "" || ids[m.ID] {
			return fmt.Errorf("import team snapshot: message %d: %w: missing or duplicate id %q", i, ErrInvalidMessage, m.ID)
		}
		ids[m.ID] = true
		msgs = append(msgs, m)
	}
	var task *string
	if s.TeamTask != nil {
		v := *s.TeamTask
		if len(v) > t.opts.TeamTaskMaxBytes {
			return fmt.Errorf("import team snapshot: team task of %d bytes exceeds %d", len(v), t.opts.TeamTaskMaxBytes)
		}
		task = &v
	}
	t.mu.Lock()
	t.messages, t.ids, t.teamTask, t.nextSeq = msgs, ids, task, max(s.NextSeq, 0)
	t.mu.Unlock()
	return nil
}
