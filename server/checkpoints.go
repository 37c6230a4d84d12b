package server

import (
	"context"
	"errors"
	"fmt"

	"connectrpc.com/connect"

	"github.com/ctxhost/ctxhost/api/servicev1"
	"github.com/ctxhost/ctxhost/engine"
)

// tagTurns makes e's session tag each turn's payload, for its checkpoint,
// as Prepare answers it (the memo then answers Prepare's own tag without
// hashing again).
func (e *entry) tagTurns() {
	e.es.SetPayloadTagger(func(agent string, p *engine.Prepared) string {
		link := payloadLink{id: p.PayloadID, extends: p.Extends, repeats: p.Repeats}
		return e.tags.tag(agent, link, p.Payload, p.MediaType, p.System, p.HasSystem)
	})
}

// checkpointErr answers a checkpoint call's error with its code.
func checkpointErr(id string, err error) error {
	var ce *connect.Error
	switch {
	case err == nil:
		return nil
	case errors.As(err, &ce):
		return err
	case errors.Is(err, engine.ErrNoCheckpoints):
		return connect.NewError(connect.CodeFailedPrecondition, err)
	case errors.Is(err, engine.ErrNotStored):
		return notFound(id)
	case errors.Is(err, engine.ErrNotKept):
		return connect.NewError(connect.CodeNotFound, err)
	case errors.Is(err, engine.ErrStored):
		return connect.NewError(connect.CodeAlreadyExists, err)
	case errors.Is(err, engine.ErrDamaged):
		return connect.NewError(connect.CodeDataLoss, err)
	}
	return temporary(err)
}

// storedEngine is the engine of stored session id's profile, read from
// the store without opening the session.
func (s *Server) storedEngine(ctx context.Context, id string) (*engine.Engine, error) {
	if err := checkID(id); err != nil {
		return nil, err
	}
	if e := s.cached(id); e != nil {
		return e.engine, nil
	}
	rec, err := engine.StoredRecord(ctx, s.store, id)
	if err != nil {
		return nil, checkpointErr(id, err)
	}
	profile := rec.Profile
	if profile == "" {
		profile = s.profiles[0]
	}
	eng := s.engines[profile]
	if eng == nil {
		return nil, failedPreconditionf("session %q was created with context profile %q, which this configuration does not declare", id, profile)
	}
	return eng, nil
}

func toCheckpoint(c engine.Checkpoint) *servicev1.Checkpoint {
	out := &servicev1.Checkpoint{Sequence: c.Version, Agent: c.Turn.Agent, Budget: toBudget(c.Turn.Budget),
		PayloadId: c.Turn.PayloadID, PayloadTag: c.Turn.PayloadTag, Messages: int32(c.Turn.Messages)}
	if !c.Time.IsZero() {
		out.TimeUnixMs = c.Time.UnixMilli()
	}
	for _, ct := range c.Turn.Budget.Components {
		out.Components = append(out.Components, &servicev1.ComponentTokens{Name: ct.Name, Tokens: int64(ct.Tokens)})
	}
	return out
}

// ListCheckpoints lists a session's kept checkpoints, oldest first.
func (s *Server) ListCheckpoints(ctx context.Context, req *connect.Request[servicev1.ListCheckpointsRequest]) (*connect.Response[servicev1.ListCheckpointsResponse], error) {
	id := req.Msg.GetSessionId()
	eng, err := s.storedEngine(ctx, id)
	if err != nil {
		return nil, err
	}
	cps, err := eng.Checkpoints(ctx, id)
	if err != nil {
		return nil, checkpointErr(id, err)
	}
	seq, err := engine.StoredVersion(ctx, s.store, id)
	if err != nil {
		return nil, checkpointErr(id, err)
	}
	out := &servicev1.ListCheckpointsResponse{Sequence: seq}
	for _, c := range cps {
		out.Checkpoints = append(out.Checkpoints, toCheckpoint(c))
	}
	return connect.NewResponse(out), nil
}

// GetCheckpoint reads a session as it stood at one of its checkpoints.
func (s *Server) GetCheckpoint(ctx context.Context, req *connect.Request[servicev1.GetCheckpointRequest]) (*connect.Response[servicev1.GetCheckpointResponse], error) {
	m := req.Msg
	id := m.GetSessionId()
	eng, err := s.storedEngine(ctx, id)
	if err != nil {
		return nil, err
	}
	st, err := eng.CheckpointState(ctx, id, m.GetSequence(), engine.HistoryQuery{From: int(m.GetFrom()), To: int(m.GetTo()), Limit: int(m.GetLimit())})
	if err != nil {
		return nil, checkpointErr(id, err)
	}
	out := &servicev1.GetCheckpointResponse{Checkpoint: toCheckpoint(st.Checkpoint), SystemPrompt: st.Texts.SystemPrompt,
		Instructions: st.Texts.Instructions, Input: st.Texts.Input, Total: int32(st.Total)}
	for _, en := range st.History {
		out.Entries = append(out.Entries, &servicev1.HistoryEntry{Message: fromMessage(en.Message), Position: int32(en.Position),
			Kind: en.Kind, Shown: en.Shown, Tokens: int32(en.Tokens)})
	}
	return connect.NewResponse(out), nil
}

// ForkSession makes a new session from a checkpoint of another.
func (s *Server) ForkSession(ctx context.Context, req *connect.Request[servicev1.ForkSessionRequest]) (*connect.Response[servicev1.ForkSessionResponse], error) {
	m := req.Msg
	id, child := m.GetSessionId(), m.GetNewSessionId()
	if err := checkID(child); err != nil {
		return nil, err
	}
	if child == id {
		return nil, invalidf("fork %q: new_session_id must name another session", id)
	}
	unlock, err := s.lock(ctx, id)
	if err != nil {
		return nil, err
	}
	defer unlock()
	unlockChild, err := s.lock(ctx, child)
	if err != nil {
		return nil, err
	}
	defer unlockChild()
	eng, err := s.storedEngine(ctx, id)
	if err != nil {
		return nil, err
	}
	cp, err := eng.Fork(ctx, id, m.GetSequence(), child)
	if err != nil {
		return nil, checkpointErr(id, err)
	}
	e, err := s.session(ctx, child)
	if err != nil {
		return nil, fmt.Errorf("open the fork %q: %w", child, err)
	}
	return connect.NewResponse(&servicev1.ForkSessionResponse{Checkpoint: toCheckpoint(cp), Session: s.info(e, child)}), nil
}

// RewindSession takes a session back to one of its checkpoints, what came
// after kept as a branch session.
func (s *Server) RewindSession(ctx context.Context, req *connect.Request[servicev1.RewindSessionRequest]) (*connect.Response[servicev1.RewindSessionResponse], error) {
	m := req.Msg
	id, branch := m.GetSessionId(), m.GetBranchSessionId()
	if m.GetSequence() == 0 {
		return nil, invalidf("rewind %q: name the checkpoint's sequence", id)
	}
	if branch != "" {
		if err := checkID(branch); err != nil {
			return nil, err
		}
	}
	unlock, err := s.lock(ctx, id)
	if err != nil {
		return nil, err
	}
	defer unlock()
	eng, err := s.storedEngine(ctx, id)
	if err != nil {
		return nil, err
	}
	s.unload(ctx, id) // reopened, as rewound, by the next call
	rw, err := eng.Rewind(ctx, id, m.GetSequence(), branch)
	if err != nil {
		return nil, checkpointErr(id, err)
	}
	return connect.NewResponse(&servicev1.RewindSessionResponse{Sequence: rw.Version, Checkpoint: toCheckpoint(rw.To),
		BranchSessionId: rw.Branch, BranchSequence: rw.BranchAt}), nil
}
