package host

import (
	"context"
	"encoding/json"

	"github.com/ctxhost/ctxhost/sdk"
)

// TurnMark is what a checkpoint says of the turn that made it: the
// version a store marks at the save that ends a prepare (with what the
// same save writes after it, in the call path the answer). It is stored
// as JSON beside the version.
type TurnMark struct {
	// Agent is the agent the turn was prepared for ("" for the session's
	// own context).
	Agent string `json:"agent,omitempty"`
	// Budget is the turn's final budget, per component.
	Budget sdk.Budget `json:"budget"`
	// PayloadID numbers the turn's payload among those the session
	// assembled (Prepared.PayloadID).
	PayloadID uint64 `json:"payload_id,omitempty"`
	// PayloadTag identifies the payload's bytes when the caller that
	// prepared the turn tags its payloads (SetPayloadTagger); empty
	// otherwise.
	PayloadTag string `json:"payload_tag,omitempty"`
	// Messages is how many messages the history held when the version was
	// saved.
	Messages int `json:"messages"`
	// History identifies those messages (Session.HistoryDigest): a
	// session's history starts with the checkpoint's exactly when its
	// digest of as many messages is this one. Empty on checkpoints made
	// before ctxhost kept it, and for a history of no messages.
	History string `json:"history,omitempty"`
}

// DecodeTurnMark reads a checkpoint's meta; nil or empty meta is a zero
// mark.
func DecodeTurnMark(meta []byte) (TurnMark, error) {
	var m TurnMark
	if len(meta) == 0 {
		return m, nil
	}
	err := json.Unmarshal(meta, &m)
	return m, err
}

// PayloadTagger returns the tag of a prepared turn's payload for agent
// (see TurnMark.PayloadTag).
type PayloadTagger func(agent string, p *Prepared) string

// SetPayloadTagger makes every turn prepared from now on tag its payload
// with f for the checkpoint its save marks (nil: no tag). f runs under
// the session's lock, before Prepare returns.
func (d *Durability) SetPayloadTagger(f PayloadTagger) {
	s := d.s
	s.mu.Lock()
	defer s.mu.Unlock()
	d.tagger = f
}

// markingRecorder is a Recorder that marks a save as a checkpoint
// (record.Journal does).
type markingRecorder interface {
	SaveMarked(ctx context.Context, meta []byte, event func() ([]byte, error), state func(context.Context) ([]byte, error)) error
}

// markTurn makes the next save mark its version as this turn's
// checkpoint. The caller holds s.mu.
func (t *turn) markTurn(out *Prepared) {
	s := t.s
	if s.dur.rec.journal == nil {
		return
	}
	if _, ok := s.dur.rec.journal.(markingRecorder); !ok {
		return
	}
	m := &TurnMark{Agent: t.agent.Name, Budget: out.Budget, PayloadID: out.PayloadID}
	if s.dur.tagger != nil {
		m.PayloadTag = s.dur.tagger(t.agent.Name, out)
	}
	s.dur.rec.mark = m
}

// save writes the pending changes through the recorder, marked as the
// pending turn's checkpoint when there is one. The caller holds s.mu.
func (r *recording) save(ctx context.Context, messages int, digest string, event func() ([]byte, error), state func(context.Context) ([]byte, error)) error {
	mr, ok := r.journal.(markingRecorder)
	if r.mark == nil || !ok {
		return r.journal.Save(ctx, event, state)
	}
	m := *r.mark
	m.Messages, m.History = messages, digest
	meta, err := json.Marshal(m)
	if err != nil {
		return r.journal.Save(ctx, event, state)
	}
	if err := mr.SaveMarked(ctx, meta, event, state); err != nil {
		return err
	}
	r.mark = nil
	return nil
}

// HistoryDigest identifies the first n messages of the history (see
// TurnMark.History); "" for none.
func (s *Session) HistoryDigest(n int) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.conv.hist.Digest(n)
}

// ForkReport is what a checkpoint:forked event says.
type ForkReport struct {
	// Parent is the session forked.
	Parent string
	// Version is the parent's checkpoint the fork stands on.
	Version uint64
	// Child is the new session.
	Child string
	// Rewound tells that the parent itself went back to Version (Child
	// is then the branch that keeps what came after).
	Rewound bool
}

// Forked emits checkpoint:forked, the event's session the new one
// (f.Child).
func (h *Host) Forked(f ForkReport) {
	h.events.emit(Event{Type: EventCheckpointForked, Session: f.Child, Fork: &f})
}
