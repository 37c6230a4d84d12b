package inspector

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"time"

	"github.com/ctxhost/ctxhost/engine"
	"github.com/ctxhost/ctxhost/sdk"
)

// Checkpoints reads the checkpoints a session's store keeps.
type Checkpoints interface {
	// Checkpoints lists session's kept checkpoints, oldest first, and
	// the session's stored version. An unknown session is ErrNotFound; a
	// store that keeps none wraps engine.ErrNoCheckpoints.
	Checkpoints(ctx context.Context, session string) ([]engine.Checkpoint, uint64, error)
	// CheckpointState reads session as it stood at version, the messages
	// of its history q selects.
	CheckpointState(ctx context.Context, session string, version uint64, q engine.HistoryQuery) (engine.CheckpointState, error)
}

// CheckpointInfo is one checkpoint as the inspector lists it.
type CheckpointInfo struct {
	Version    uint64                `json:"version"`
	Time       time.Time             `json:"time"`
	Agent      string                `json:"agent,omitempty"`
	Used       int                   `json:"used"`
	Window     int                   `json:"window"`
	Available  int                   `json:"available"`
	Components []sdk.ComponentTokens `json:"components"`
	Messages   int                   `json:"messages"`
	PayloadID  uint64                `json:"payload_id,omitempty"`
	PayloadTag string                `json:"payload_tag,omitempty"`
}

func checkpointInfo(c engine.Checkpoint) CheckpointInfo {
	b := c.Turn.Budget
	return CheckpointInfo{Version: c.Version, Time: c.Time, Agent: c.Turn.Agent, Used: b.Used, Window: b.Window,
		Available: b.Available, Components: nonNil(b.Components), Messages: c.Turn.Messages, PayloadID: c.Turn.PayloadID,
		PayloadTag: c.Turn.PayloadTag}
}

// CheckpointView is a session as it stood at a checkpoint: its texts and
// a page of its history's messages, each as given and as it was shown.
type CheckpointView struct {
	CheckpointInfo
	SystemPrompt string     `json:"system_prompt,omitempty"`
	Instructions string     `json:"instructions,omitempty"`
	Input        string     `json:"input,omitempty"`
	Total        int        `json:"total"`
	From         int        `json:"from"`
	History      []Original `json:"history"`
}

// maxCheckpointText bounds each text a checkpoint view answers (a
// message's, the system prompt's): the view is for finding where a
// session stood, the originals are one request away.
const maxCheckpointText = 4000

func clipText(s string) string {
	if len(s) <= maxCheckpointText {
		return s
	}
	cut := maxCheckpointText
	for cut > 0 && s[cut]&0xC0 == 0x80 { // not inside a UTF-8 sequence
		cut--
	}
	return s[:cut] + fmt.Sprintf("\n… %d more bytes", len(s)-cut)
}

// checkpointError answers a checkpoint read's error.
func checkpointError(w http.ResponseWriter, session string, err error) {
	switch {
	case errors.Is(err, ErrNotFound), errors.Is(err, engine.ErrNotStored):
		writeError(w, http.StatusNotFound, fmt.Sprintf("no stored session %q", session))
	case errors.Is(err, engine.ErrNoCheckpoints):
		writeError(w, http.StatusNotFound, engine.ErrNoCheckpoints.Error())
	case errors.Is(err, engine.ErrNotKept):
		writeError(w, http.StatusNotFound, err.Error())
	default:
		writeError(w, http.StatusServiceUnavailable, err.Error())
	}
}

// checkpoints lists a session's checkpoints.
func (h *Handler) checkpoints(w http.ResponseWriter, r *http.Request) {
	if h.checkpointsOf == nil {
		writeError(w, http.StatusNotFound, "checkpoints are not served")
		return
	}
	ctx, cancel := context.WithTimeout(r.Context(), 10*time.Second)
	defer cancel()
	id := r.PathValue("id")
	cps, version, err := h.checkpointsOf.Checkpoints(ctx, id)
	if err != nil {
		checkpointError(w, id, err)
		return
	}
	out := make([]CheckpointInfo, len(cps))
	for i, c := range cps {
		out[i] = checkpointInfo(c)
	}
	writeJSON(w, map[string]any{"checkpoints": out, "version": version})
}

// checkpoint answers a session as it stood at one checkpoint, with a
// page of its history (?from=, ?limit=).
func (h *Handler) checkpoint(w http.ResponseWriter, r *http.Request) {
	if h.checkpointsOf == nil {
		writeError(w, http.StatusNotFound, "checkpoints are not served")
		return
	}
	version, err := strconv.ParseUint(r.PathValue("version"), 10, 64)
	if err != nil || version == 0 {
		writeError(w, http.StatusBadRequest, "checkpoint "+strconv.Quote(r.PathValue("version"))+": want a version number")
		return
	}
	from, limit, err := pageParams(r.URL.Query().Get("from"), r.URL.Query().Get("limit"), 200)
	if err != nil {
		writeError(w, http.StatusBadRequest, err.Error())
		return
	}
	ctx, cancel := context.WithTimeout(r.Context(), 10*time.Second)
	defer cancel()
	id := r.PathValue("id")
	st, err := h.checkpointsOf.CheckpointState(ctx, id, version, engine.HistoryQuery{From: from, Limit: limit})
	if err != nil {
		checkpointError(w, id, err)
		return
	}
	v := CheckpointView{CheckpointInfo: checkpointInfo(st.Checkpoint), SystemPrompt: clipText(st.Texts.SystemPrompt),
		Instructions: clipText(st.Texts.Instructions), Input: clipText(st.Texts.Input), Total: st.Total, From: from, History: []Original{}}
	for _, en := range st.History {
		v.History = append(v.History, Original{ID: en.Message.ID, Role: en.Message.Role, Kind: en.Kind, Shown: en.Shown,
			Position: en.Position, Tokens: en.Tokens, Text: clipText(messageText(en.Message))})
	}
	writeJSON(w, v)
}
