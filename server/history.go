package server

import (
	"context"
	"errors"

	"connectrpc.com/connect"

	"github.com/ctxhost/ctxhost/api/servicev1"
	"github.com/ctxhost/ctxhost/engine"
)

// SetTools replaces the session's tool definitions, tool choice and
// response schema.
func (s *Server) SetTools(ctx context.Context, req *connect.Request[servicev1.SetToolsRequest]) (*connect.Response[servicev1.WriteResponse], error) {
	id := req.Msg.GetSessionId()
	tools, err := toRequestTools(req.Msg)
	if err != nil {
		return nil, invalid(err)
	}
	if err := tools.Check(); err != nil {
		return nil, invalid(err)
	}
	unlock, err := s.lock(ctx, id)
	if err != nil {
		return nil, err
	}
	defer unlock()
	return s.simpleWrite(ctx, id, req.Msg.GetWrite(), req.Msg, func(w *write) error {
		return writeErr(w.e.es.SetTools(tools))
	})
}

// ClearHistory removes every message of the session's history.
func (s *Server) ClearHistory(ctx context.Context, req *connect.Request[servicev1.ClearHistoryRequest]) (*connect.Response[servicev1.WriteResponse], error) {
	id := req.Msg.GetSessionId()
	unlock, err := s.lock(ctx, id)
	if err != nil {
		return nil, err
	}
	defer unlock()
	return s.simpleWrite(ctx, id, req.Msg.GetWrite(), req.Msg, func(w *write) error {
		return writeErr(w.e.es.ClearHistory())
	})
}

// writeErr classifies a session change's error: a failure to save stays
// as it is, anything else is the caller's invalid argument.
func writeErr(err error) error {
	if err != nil && !errors.Is(err, engine.ErrNotPersisted) {
		return invalid(err)
	}
	return err
}

// GetHistory reads stored messages as given, the originals of masked,
// cut, stripped and omitted ones included.
func (s *Server) GetHistory(ctx context.Context, req *connect.Request[servicev1.GetHistoryRequest]) (*connect.Response[servicev1.GetHistoryResponse], error) {
	id := req.Msg.GetSessionId()
	e, unlock, err := s.lockedSession(ctx, id)
	if err != nil {
		return nil, err
	}
	defer unlock()
	q := engine.HistoryQuery{IDs: req.Msg.GetIds(), From: int(req.Msg.GetFrom()), To: int(req.Msg.GetTo()),
		Query: req.Msg.GetQuery(), Limit: int(req.Msg.GetLimit())}
	entries, total, err := e.es.History(q)
	if err != nil {
		return nil, notFoundOrInvalid(err, len(q.IDs) > 0)
	}
	out := &servicev1.GetHistoryResponse{Total: int32(total)}
	out.Shape, out.ShapeReason = e.es.HistoryShape()
	for _, en := range entries {
		out.Entries = append(out.Entries, &servicev1.HistoryEntry{Message: fromMessage(en.Message), Position: int32(en.Position),
			Kind: en.Kind, Shown: en.Shown, Tokens: int32(en.Tokens)})
	}
	return connect.NewResponse(out), nil
}

// notFoundOrInvalid answers an unknown id with NOT_FOUND, anything else
// with INVALID_ARGUMENT.
func notFoundOrInvalid(err error, byID bool) error {
	if byID {
		return connect.NewError(connect.CodeNotFound, err)
	}
	return invalid(err)
}

// FormatHistory renders the history (or the compacted view) as text.
func (s *Server) FormatHistory(ctx context.Context, req *connect.Request[servicev1.FormatHistoryRequest]) (*connect.Response[servicev1.FormatHistoryResponse], error) {
	id := req.Msg.GetSessionId()
	e, unlock, err := s.lockedSession(ctx, id)
	if err != nil {
		return nil, err
	}
	defer unlock()
	return connect.NewResponse(&servicev1.FormatHistoryResponse{Text: e.es.FormatHistory(req.Msg.GetView())}), nil
}

// toRequestTools converts the API's tools to the sdk's.
func toRequestTools(m *servicev1.SetToolsRequest) (engine.RequestTools, error) {
	var out engine.RequestTools
	for _, t := range m.GetTools() {
		params, err := fromValue(t.GetParameters())
		if err != nil {
			return out, err
		}
		out.Tools = append(out.Tools, engine.ToolDefinition{Name: t.GetName(), Description: t.GetDescription(), Parameters: params})
	}
	if c := m.GetToolChoice(); c != nil {
		out.ToolChoice = &engine.ToolChoice{Mode: c.GetMode(), Name: c.GetName()}
	}
	if f := m.GetResponseFormat(); f != nil {
		schema, err := fromValue(f.GetSchema())
		if err != nil {
			return out, err
		}
		out.ResponseFormat = &engine.ResponseFormat{Name: f.GetName(), Schema: schema, Strict: f.GetStrict()}
	}
	return out, nil
}
