package server

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"unicode/utf8"

	"connectrpc.com/connect"

	"github.com/ctxhost/ctxhost/api/servicev1"
	"github.com/ctxhost/ctxhost/engine"
)

// Memory blocks are kept in the store every engine shares; a block's
// tokens are counted with its session's profile (a session scope) or
// the first profile's tokenizer.

// memoryEngine is the engine that checks writes to scope: the session's
// profile's for a session scope held or stored, else the first
// profile's.
func (s *Server) memoryEngine(ctx context.Context, scope engine.MemoryScope) *engine.Engine {
	if scope.Kind == engine.ScopeSession {
		s.mu.Lock()
		e := s.open[scope.Name]
		s.mu.Unlock()
		if e != nil {
			return e.engine
		}
		if r, err := engine.StoredRecord(ctx, s.store, scope.Name); err == nil && s.engines[r.Profile] != nil {
			return s.engines[r.Profile]
		}
	}
	return s.engines[s.profiles[0]]
}

func parseScope(scope string) (engine.MemoryScope, error) {
	sc, err := engine.ParseMemoryScope(scope)
	if err != nil {
		return sc, invalidf("%v", err)
	}
	return sc, nil
}

// memoryError maps a memory block error to its code.
func (s *Server) memoryError(ctx context.Context, procedure string, err error) error {
	var ce *connect.Error
	switch {
	case errors.As(err, &ce):
		return ce
	case errors.Is(err, engine.ErrBlockNotFound):
		return connect.NewError(connect.CodeNotFound, err)
	case errors.Is(err, engine.ErrVersionConflict):
		return connect.NewError(connect.CodeAborted, err)
	case errors.Is(err, engine.ErrBlockReadOnly):
		return connect.NewError(connect.CodePermissionDenied, err)
	case errors.Is(err, engine.ErrBlockOverLimit), errors.Is(err, engine.ErrInvalidBlock):
		return connect.NewError(connect.CodeInvalidArgument, err)
	case errors.Is(err, engine.ErrDamaged):
		return s.toConnect(ctx, procedure, err)
	}
	return s.toConnect(ctx, procedure, temporary(err))
}

// blockToProto converts a block, its size counted as its limit is.
func blockToProto(e *engine.Engine, b engine.MemoryBlock, deleted bool) *servicev1.MemoryBlock {
	out := &servicev1.MemoryBlock{Scope: b.Scope.String(), Label: b.Label, Description: b.Description, Value: b.Value,
		Limit: int32(b.Limit), Unit: b.Unit, ReadOnly: b.ReadOnly, Version: b.Version, Deleted: deleted}
	if !deleted {
		if count, err := e.MemoryCounter(); err == nil {
			out.Size = int32(b.Size(count))
		}
	}
	return out
}

// ListMemoryBlocks reads the current blocks of scopes or of a session.
func (s *Server) ListMemoryBlocks(ctx context.Context, req *connect.Request[servicev1.ListMemoryBlocksRequest]) (*connect.Response[servicev1.ListMemoryBlocksResponse], error) {
	m := req.Msg
	var scopes []engine.MemoryScope
	eng := s.engines[s.profiles[0]]
	if id := m.GetSessionId(); id != "" {
		e, unlock, err := s.lockedSession(ctx, id)
		if err != nil {
			return nil, err
		}
		scopes, eng = e.es.MemoryScopes(), e.engine
		unlock()
		if scopes == nil {
			return nil, failedPreconditionf("session %q is on a fresh profile: its turns see no memory blocks", id)
		}
	}
	for _, raw := range m.GetScopes() {
		sc, err := parseScope(raw)
		if err != nil {
			return nil, err
		}
		scopes = append(scopes, sc)
	}
	if len(scopes) == 0 {
		return nil, invalidf("name scopes or a session_id")
	}
	blocks, err := eng.MemoryBlocks(ctx, scopes...)
	if err != nil {
		return nil, s.memoryError(ctx, "ListMemoryBlocks", err)
	}
	if m.GetVisible() {
		blocks = engine.VisibleBlocks(blocks)
	}
	out := &servicev1.ListMemoryBlocksResponse{}
	for _, b := range blocks {
		out.Blocks = append(out.Blocks, blockToProto(eng, b, false))
	}
	return connect.NewResponse(out), nil
}

// GetMemoryBlock reads one block.
func (s *Server) GetMemoryBlock(ctx context.Context, req *connect.Request[servicev1.GetMemoryBlockRequest]) (*connect.Response[servicev1.MemoryBlock], error) {
	sc, err := parseScope(req.Msg.GetScope())
	if err != nil {
		return nil, err
	}
	eng := s.memoryEngine(ctx, sc)
	b, err := eng.MemoryBlock(ctx, sc, req.Msg.GetLabel())
	if err != nil {
		return nil, s.memoryError(ctx, "GetMemoryBlock", err)
	}
	return connect.NewResponse(blockToProto(eng, b, false)), nil
}

// maxPutTries bounds how often a PutMemoryBlock without an expected
// version reads the block again after losing a race.
const maxPutTries = 8

// PutMemoryBlock writes a whole block.
func (s *Server) PutMemoryBlock(ctx context.Context, req *connect.Request[servicev1.PutMemoryBlockRequest]) (*connect.Response[servicev1.MemoryBlock], error) {
	m := req.Msg
	pb := m.GetBlock()
	if pb == nil {
		return nil, invalidf("block: required")
	}
	sc, err := parseScope(pb.GetScope())
	if err != nil {
		return nil, err
	}
	b := engine.MemoryBlock{Scope: sc, Label: pb.GetLabel(), Description: pb.GetDescription(), Value: pb.GetValue(),
		Limit: int(pb.GetLimit()), Unit: pb.GetUnit(), ReadOnly: pb.GetReadOnly()}
	eng := s.memoryEngine(ctx, sc)
	for try := 0; ; try++ {
		expected := m.GetExpectedVersion()
		if expected == 0 && !m.GetCreateOnly() {
			cur, err := eng.MemoryBlocks(ctx, sc)
			if err != nil {
				return nil, s.memoryError(ctx, "PutMemoryBlock", err)
			}
			expected = latestVersion(ctx, eng, cur, sc, b.Label)
		}
		put, err := eng.PutMemoryBlock(ctx, b, expected)
		if errors.Is(err, engine.ErrVersionConflict) && m.GetExpectedVersion() == 0 && !m.GetCreateOnly() && try+1 < maxPutTries {
			continue
		}
		if err != nil {
			return nil, s.memoryError(ctx, "PutMemoryBlock", err)
		}
		return connect.NewResponse(blockToProto(eng, put, false)), nil
	}
}

// latestVersion is the block's last version: the current one's, else
// (deleted, or never written) the last stored version's, 0 when none.
func latestVersion(ctx context.Context, eng *engine.Engine, current []engine.MemoryBlock, sc engine.MemoryScope, label string) uint64 {
	for _, b := range current {
		if b.Label == label {
			return b.Version
		}
	}
	vs, err := eng.MemoryBlockVersions(ctx, sc, label)
	if err != nil || len(vs) == 0 {
		return 0
	}
	return vs[len(vs)-1].Version
}

// EditMemoryBlock appends to a block's value or replaces text in it.
func (s *Server) EditMemoryBlock(ctx context.Context, req *connect.Request[servicev1.EditMemoryBlockRequest]) (*connect.Response[servicev1.MemoryBlock], error) {
	m := req.Msg
	sc, err := parseScope(m.GetScope())
	if err != nil {
		return nil, err
	}
	var edit engine.Edit
	switch m.GetOp() {
	case "append":
		edit = engine.AppendEdit(m.GetText(), !m.GetOperator())
	case "replace":
		edit = engine.ReplaceEdit(m.GetOldText(), m.GetNewText(), !m.GetOperator())
	default:
		return nil, invalidf("op %q: want append or replace", m.GetOp())
	}
	eng := s.memoryEngine(ctx, sc)
	b, err := eng.EditMemoryBlock(ctx, sc, m.GetLabel(), edit, m.GetExpectedVersion())
	if err != nil {
		return nil, s.memoryError(ctx, "EditMemoryBlock", err)
	}
	return connect.NewResponse(blockToProto(eng, b, false)), nil
}

// DeleteMemoryBlock deletes a block (its versions are kept).
func (s *Server) DeleteMemoryBlock(ctx context.Context, req *connect.Request[servicev1.DeleteMemoryBlockRequest]) (*connect.Response[servicev1.DeleteMemoryBlockResponse], error) {
	m := req.Msg
	sc, err := parseScope(m.GetScope())
	if err != nil {
		return nil, err
	}
	eng := s.memoryEngine(ctx, sc)
	expected := m.GetExpectedVersion()
	if expected == 0 {
		cur, err := eng.MemoryBlock(ctx, sc, m.GetLabel())
		if err != nil {
			return nil, s.memoryError(ctx, "DeleteMemoryBlock", err)
		}
		expected = cur.Version
	}
	if err := eng.DeleteMemoryBlock(ctx, sc, m.GetLabel(), expected); err != nil {
		return nil, s.memoryError(ctx, "DeleteMemoryBlock", err)
	}
	return connect.NewResponse(&servicev1.DeleteMemoryBlockResponse{Version: expected + 1}), nil
}

// ListMemoryBlockVersions reads every version of a block, oldest first.
func (s *Server) ListMemoryBlockVersions(ctx context.Context, req *connect.Request[servicev1.GetMemoryBlockRequest]) (*connect.Response[servicev1.ListMemoryBlocksResponse], error) {
	sc, err := parseScope(req.Msg.GetScope())
	if err != nil {
		return nil, err
	}
	eng := s.memoryEngine(ctx, sc)
	vs, err := eng.MemoryBlockVersions(ctx, sc, req.Msg.GetLabel())
	if err != nil {
		return nil, s.memoryError(ctx, "ListMemoryBlockVersions", err)
	}
	out := &servicev1.ListMemoryBlocksResponse{}
	for _, b := range vs {
		// A deleted version carries no content: a stored one always has
		// its unit.
		out.Blocks = append(out.Blocks, blockToProto(eng, b, b.Unit == ""))
	}
	return connect.NewResponse(out), nil
}

// SetMembership sets the agent and groups whose blocks a session sees.
func (s *Server) SetMembership(ctx context.Context, req *connect.Request[servicev1.SetMembershipRequest]) (*connect.Response[servicev1.SessionInfo], error) {
	id := req.Msg.GetSessionId()
	if err := checkMembership(req.Msg.GetAgent(), req.Msg.GetGroups()); err != nil {
		return nil, err
	}
	e, unlock, err := s.lockedSession(ctx, id)
	if err != nil {
		return nil, err
	}
	defer unlock()
	if err := e.es.SetMembership(ctx, req.Msg.GetAgent(), req.Msg.GetGroups()); err != nil {
		if e.es.MemoryScopes() == nil {
			return nil, failedPreconditionf("%v", err)
		}
		return nil, s.toConnect(ctx, "SetMembership", temporary(err))
	}
	return connect.NewResponse(s.info(e, id)), nil
}

// checkMembership refuses an agent or group name a scope cannot hold.
func checkMembership(agent string, groups []string) error {
	if agent != "" {
		if err := (engine.MemoryScope{Kind: engine.ScopeAgent, Name: agent}).Validate(); err != nil {
			return invalidf("agent: %v", err)
		}
	}
	for _, g := range groups {
		if err := (engine.MemoryScope{Kind: engine.ScopeGroup, Name: g}).Validate(); err != nil {
			return invalidf("groups: %v", err)
		}
	}
	return nil
}

// RunTool answers one of ctxhost's own tools in a session and records
// the call (an assistant turn of that one call, under the caller's call
// id or one of ctxhost's)
// and its result (a tool message) in the session's history, saved
// together.
func (s *Server) RunTool(ctx context.Context, req *connect.Request[servicev1.RunToolRequest]) (*connect.Response[servicev1.RunToolResponse], error) {
	m := req.Msg
	if !engine.IsOwnTool(m.GetName()) {
		return nil, invalidf("tool %q: ctxhost answers %s, %s, %s and %s", m.GetName(),
			engine.MemoryViewTool, engine.MemoryAppendTool, engine.MemoryReplaceTool, "ctxhost_recall")
	}
	e, unlock, err := s.lockedSession(ctx, m.GetSessionId())
	if err != nil {
		return nil, err
	}
	defer unlock()
	id := m.GetCallId()
	if id == "" {
		id = newCallID()
	} else if err := checkCallID(id, e.es.Messages()); err != nil {
		return nil, err
	}
	res, err := e.es.RunToolCall(ctx, engine.ToolCall{ID: id, Name: m.GetName(), Arguments: m.GetArguments()})
	if err != nil {
		if errors.Is(err, engine.ErrNotPersisted) { // the history holds what the store did not save
			s.unload(ctx, m.GetSessionId())
		}
		return nil, s.memoryError(ctx, "RunTool", err)
	}
	return connect.NewResponse(&servicev1.RunToolResponse{Result: res.Text, IsError: res.IsError, CallId: id}), nil
}

// maxCallID is the longest tool-call id RunTool records as given.
const maxCallID = 256

// checkCallID refuses a caller's tool-call id that is too long, holds a
// space or a control character, or names a call the history already has
// (a second call under one id would pair the wrong result with it).
func checkCallID(id string, history []engine.Message) error {
	if len(id) > maxCallID {
		return invalidf("call id: %d bytes, at most %d", len(id), maxCallID)
	}
	for _, r := range id {
		if r <= ' ' || r == 0x7f || !utf8.ValidRune(r) || r == utf8.RuneError {
			return invalidf("call id %q: no spaces or control characters", id)
		}
	}
	for i := range history {
		for _, tc := range history[i].ToolCalls {
			if tc.ID == id {
				return invalidf("call id %q: already a call in the session", id)
			}
		}
	}
	return nil
}

// newCallID is the id of a tool call RunTool records: "ctxhost_" and 24
// random hexadecimal digits.
func newCallID() string {
	b := make([]byte, 12)
	_, _ = rand.Read(b)
	return "ctxhost_" + hex.EncodeToString(b)
}
