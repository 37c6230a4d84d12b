package server

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"sort"
	"strings"
	"time"

	"connectrpc.com/connect"
	"google.golang.org/protobuf/proto"

	"github.com/ctxhost/ctxhost/api/servicev1"
	"github.com/ctxhost/ctxhost/api/servicev1/servicev1connect"
	"github.com/ctxhost/ctxhost/engine"
)

var _ servicev1connect.ContextServiceHandler = (*Server)(nil)

func (s *Server) info(e *entry, id string) *servicev1.SessionInfo {
	info := &servicev1.SessionInfo{SessionId: id, Profile: e.profile, Sequence: e.es.StoredVersion(),
		Messages: int32(e.es.MessageCount()), Plugins: e.es.Plugins(), Strategy: e.es.Strategy(),
		MultiAgent: e.es.IsTeam(), Fresh: e.es.IsFresh()}
	for _, sc := range e.es.MemoryScopes() {
		info.MemoryScopes = append(info.MemoryScopes, sc.String())
	}
	if e.es.IsTeam() {
		for _, a := range e.engine.Config.Agents {
			info.Agents = append(info.Agents, a.Name)
		}
	}
	return info
}

// CreateSession creates a session with a profile.
func (s *Server) CreateSession(ctx context.Context, req *connect.Request[servicev1.CreateSessionRequest]) (*connect.Response[servicev1.SessionInfo], error) {
	m := req.Msg
	id, key := m.GetSessionId(), m.GetIdempotencyKey()
	if err := checkID(id); err != nil {
		return nil, err
	}
	if len(key) > maxKeyBytes {
		return nil, invalidf("idempotency_key: %d bytes, at most %d", len(key), maxKeyBytes)
	}
	profile, eng, err := s.profileEngine(m.GetProfile())
	if err != nil {
		return nil, err
	}
	if err := checkMembership(m.GetAgent(), m.GetGroups()); err != nil {
		return nil, err
	}
	unlock, err := s.lock(ctx, id)
	if err != nil {
		return nil, err
	}
	defer unlock()
	digest := ""
	if key != "" {
		digest = requestDigest(m)
	}
	e, err := s.session(ctx, id)
	if err == nil {
		return s.createdBefore(e, id, key, digest)
	}
	if connect.CodeOf(err) != connect.CodeNotFound {
		return nil, err
	}
	rec := engine.Record{Profile: profile, Agent: m.GetAgent(), Groups: m.GetGroups()}
	if key != "" {
		rec = rec.WithKey(engine.KeyRecord{Key: key, Seq: 1, Digest: digest})
	}
	es, err := eng.CreateSession(id, engine.CreateOptions{Record: rec,
		SystemPrompt: m.GetSystemPrompt(), Instructions: m.GetInstructions()})
	if err != nil {
		if errors.Is(err, engine.ErrStored) || errors.Is(err, engine.ErrVersionConflict) {
			// Another server created it first: with this key, that
			// was this call.
			if e, lerr := s.session(ctx, id); lerr == nil {
				return s.createdBefore(e, id, key, digest)
			}
			return nil, connect.NewError(connect.CodeAlreadyExists, fmt.Errorf("session %q already exists", id))
		}
		return nil, err
	}
	e = &entry{profile: profile, engine: eng, es: es, tags: tagMemo{}}
	s.remember(id, e)
	return connect.NewResponse(s.info(e, id)), nil
}

// createdBefore answers a CreateSession of a session that exists: replayed
// when key created it (the same request), else ALREADY_EXISTS.
func (s *Server) createdBefore(e *entry, id, key, digest string) (*connect.Response[servicev1.SessionInfo], error) {
	if key != "" {
		r, err := e.es.Record()
		if rec := r.Key(key); err == nil && rec != nil {
			if err := checkKey(rec, digest); err != nil {
				return nil, err
			}
			info := s.info(e, id)
			info.Replayed = true
			return connect.NewResponse(info), nil
		}
	}
	return nil, connect.NewError(connect.CodeAlreadyExists, fmt.Errorf("session %q already exists", id))
}

// GetSession describes a session.
func (s *Server) GetSession(ctx context.Context, req *connect.Request[servicev1.GetSessionRequest]) (*connect.Response[servicev1.SessionInfo], error) {
	id := req.Msg.GetSessionId()
	e, unlock, err := s.lockedSession(ctx, id)
	if err != nil {
		return nil, err
	}
	defer unlock()
	return connect.NewResponse(s.info(e, id)), nil
}

// ListSessions pages through the session ids: those the store lists
// (when it can: engine.ListStored) and those held in memory.
func (s *Server) ListSessions(ctx context.Context, req *connect.Request[servicev1.ListSessionsRequest]) (*connect.Response[servicev1.ListSessionsResponse], error) {
	limit := int(req.Msg.GetLimit())
	if limit < 0 || limit > 1000 {
		return nil, invalidf("limit %d: want 0 to 1000", limit)
	}
	if limit == 0 {
		limit = 100
	}
	seen := map[string]bool{}
	stored, _, err := engine.ListStored(ctx, s.store)
	if err != nil {
		return nil, temporary(err)
	}
	for _, id := range stored {
		seen[id] = true
	}
	s.mu.Lock()
	for id := range s.open {
		seen[id] = true
	}
	s.mu.Unlock()
	ids := make([]string, 0, len(seen))
	for id := range seen {
		if id > req.Msg.GetAfter() {
			ids = append(ids, id)
		}
	}
	sort.Strings(ids)
	out := &servicev1.ListSessionsResponse{}
	if len(ids) > limit {
		ids = ids[:limit]
		out.NextAfter = ids[limit-1]
	}
	out.SessionIds = ids
	return connect.NewResponse(out), nil
}

// DeleteSession ends a session and deletes its stored state.
func (s *Server) DeleteSession(ctx context.Context, req *connect.Request[servicev1.DeleteSessionRequest]) (*connect.Response[servicev1.DeleteSessionResponse], error) {
	id := req.Msg.GetSessionId()
	unlock, err := s.lock(ctx, id)
	if err != nil {
		return nil, err
	}
	defer unlock()
	e, err := s.session(ctx, id)
	if connect.CodeOf(err) == connect.CodeNotFound {
		return connect.NewResponse(&servicev1.DeleteSessionResponse{}), nil
	}
	if err != nil {
		return nil, err
	}
	s.mu.Lock()
	delete(s.open, id)
	s.mu.Unlock()
	_ = e.es.Close(ctx)
	if err := e.engine.EndSession(ctx, id); err != nil && !errors.Is(err, engine.ErrNoSession) {
		return nil, err
	}
	if err := e.engine.ForgetSessionMemory(ctx, id); err != nil {
		return nil, s.memoryError(ctx, "DeleteSession", err)
	}
	return connect.NewResponse(&servicev1.DeleteSessionResponse{Deleted: true}), nil
}

// AppendMessages adds messages to the history.
func (s *Server) AppendMessages(ctx context.Context, req *connect.Request[servicev1.AppendMessagesRequest]) (*connect.Response[servicev1.AppendMessagesResponse], error) {
	id := req.Msg.GetSessionId()
	if err := s.limits.checkAppend(req.Msg.GetMessages()); err != nil {
		return nil, err
	}
	unlock, err := s.lock(ctx, id)
	if err != nil {
		return nil, err
	}
	defer unlock()
	w, rec, err := s.beginWrite(ctx, id, req.Msg.GetWrite(), req.Msg)
	if err != nil {
		return nil, err
	}
	if rec != nil {
		return connect.NewResponse(&servicev1.AppendMessagesResponse{Sequence: rec.Seq, Ids: rec.IDs, Replayed: true}), nil
	}
	seq, ids, err := s.appendMessages(ctx, w, req.Msg.GetMessages())
	if err != nil {
		return nil, err
	}
	return connect.NewResponse(&servicev1.AppendMessagesResponse{Sequence: seq, Ids: ids}), nil
}

// SetText sets the system prompt, the instructions, the input or the team task.
func (s *Server) SetText(ctx context.Context, req *connect.Request[servicev1.SetTextRequest]) (*connect.Response[servicev1.WriteResponse], error) {
	id, value := req.Msg.GetSessionId(), req.Msg.GetValue()
	unlock, err := s.lock(ctx, id)
	if err != nil {
		return nil, err
	}
	defer unlock()
	var set func(*engine.Session) error
	switch req.Msg.GetText() {
	case servicev1.Text_TEXT_SYSTEM_PROMPT:
		set = func(es *engine.Session) error { return es.SetSystemPrompt(value) }
	case servicev1.Text_TEXT_INSTRUCTIONS:
		set = func(es *engine.Session) error { return es.SetInstructions(value) }
	case servicev1.Text_TEXT_INPUT:
		set = func(es *engine.Session) error { return es.SetInput(value) }
	case servicev1.Text_TEXT_TEAM_TASK:
		set = func(es *engine.Session) error { return es.SetTeamTask(value) }
	default:
		return nil, invalidf("text %v: want TEXT_SYSTEM_PROMPT, TEXT_INSTRUCTIONS, TEXT_INPUT or TEXT_TEAM_TASK", req.Msg.GetText())
	}
	return s.simpleWrite(ctx, id, req.Msg.GetWrite(), req.Msg, func(w *write) error {
		if err := set(w.e.es); err != nil && !errors.Is(err, engine.ErrNotPersisted) {
			return invalid(err)
		} else if err != nil {
			return err
		}
		return nil
	})
}

// simpleWrite is a write answered with a WriteResponse.
func (s *Server) simpleWrite(ctx context.Context, id string, opts *servicev1.WriteOptions, msg proto.Message, change func(*write) error) (*connect.Response[servicev1.WriteResponse], error) {
	w, rec, err := s.beginWrite(ctx, id, opts, msg)
	if err != nil {
		return nil, err
	}
	if rec != nil {
		return connect.NewResponse(&servicev1.WriteResponse{Sequence: rec.Seq, Replayed: true}), nil
	}
	seq, err := s.single(ctx, w, func() error { return change(w) })
	if err != nil {
		return nil, err
	}
	return connect.NewResponse(&servicev1.WriteResponse{Sequence: seq}), nil
}

// ApplyOp runs a plugin op.
func (s *Server) ApplyOp(ctx context.Context, req *connect.Request[servicev1.ApplyOpRequest]) (*connect.Response[servicev1.ApplyOpResponse], error) {
	id, plugin, op := req.Msg.GetSessionId(), req.Msg.GetPlugin(), req.Msg.GetOp()
	if op == "" {
		return nil, invalidf("op: empty")
	}
	args, err := fromValue(req.Msg.GetArgs())
	if err != nil {
		return nil, invalidf("args: %v", err)
	}
	unlock, err := s.lock(ctx, id)
	if err != nil {
		return nil, err
	}
	defer unlock()
	w, rec, err := s.beginWrite(ctx, id, req.Msg.GetWrite(), req.Msg)
	if err != nil {
		return nil, err
	}
	if rec != nil {
		out, _ := w.e.answers.find(w.key, rec.Seq).(*servicev1.ApplyOpResponse)
		if out == nil { // answered before this server started: the result is gone
			out = &servicev1.ApplyOpResponse{Sequence: rec.Seq}
		}
		out.Replayed = true
		return connect.NewResponse(out), nil
	}
	if plugins := w.e.es.Plugins(); !slices.Contains(plugins, plugin) && w.e.engine.UnavailablePluginNamed(plugin) == nil {
		return nil, invalidf("unknown plugin %q (bound: %s)", plugin, strings.Join(plugins, ", "))
	}
	var out json.RawMessage
	seq, err := s.single(ctx, w, func() error {
		var err error
		out, err = w.e.es.Apply(ctx, plugin, op, args)
		return err
	})
	if err != nil {
		return nil, err
	}
	res, err := toValue(out)
	if err != nil {
		return nil, fmt.Errorf("plugin %q op %q result: %w", plugin, op, err)
	}
	answer := &servicev1.ApplyOpResponse{Sequence: seq, Result: res}
	w.e.answers.keep(w.key, seq, answer)
	return connect.NewResponse(answer), nil
}

// ReportUsage records the provider's token counts of the last call.
func (s *Server) ReportUsage(ctx context.Context, req *connect.Request[servicev1.ReportUsageRequest]) (*connect.Response[servicev1.WriteResponse], error) {
	id := req.Msg.GetSessionId()
	p, c := req.Msg.GetPromptTokens(), req.Msg.GetCompletionTokens()
	if p < 0 || c < 0 || p > 1<<31 || c > 1<<31 {
		return nil, invalidf("prompt_tokens %d, completion_tokens %d: want 0 to 2^31", p, c)
	}
	unlock, err := s.lock(ctx, id)
	if err != nil {
		return nil, err
	}
	defer unlock()
	var warning string
	res, err := s.simpleWrite(ctx, id, req.Msg.GetWrite(), req.Msg, func(w *write) error {
		err := w.e.es.ReportUsage(int(p), int(c))
		warning = w.e.es.CalibrationWarning()
		return err
	})
	if err == nil && warning != "" {
		res.Header().Set(WarningHeader, warning)
		s.log.Warn("report usage", "session", id, "warning", warning)
	}
	return res, err
}

// Compact forces a compaction down to the strategy's target.
func (s *Server) Compact(ctx context.Context, req *connect.Request[servicev1.CompactRequest]) (*connect.Response[servicev1.CompactResponse], error) {
	id := req.Msg.GetSessionId()
	unlock, err := s.lock(ctx, id)
	if err != nil {
		return nil, err
	}
	defer unlock()
	w, rec, err := s.beginWrite(ctx, id, req.Msg.GetWrite(), req.Msg)
	if err != nil {
		return nil, err
	}
	if rec != nil {
		return connect.NewResponse(&servicev1.CompactResponse{Sequence: rec.Seq, Replayed: true}), nil
	}
	if w.e.es.IsFresh() {
		return nil, failedPreconditionf("session %q builds fresh task contexts: there is no conversation to compact", id)
	}
	var report *engine.CompactionReport
	seq, err := s.single(ctx, w, func() error {
		var err error
		report, err = w.e.es.Compact(ctx)
		return err
	})
	if err != nil {
		return nil, err
	}
	return connect.NewResponse(&servicev1.CompactResponse{Sequence: seq, Compaction: toCompaction(report)}), nil
}

// ImportState replaces the session's state with an exported one.
func (s *Server) ImportState(ctx context.Context, req *connect.Request[servicev1.ImportStateRequest]) (*connect.Response[servicev1.WriteResponse], error) {
	id := req.Msg.GetSessionId()
	var state map[string]json.RawMessage // checked before the session is loaded
	if err := json.Unmarshal(req.Msg.GetState(), &state); err != nil {
		return nil, invalidf("state: not an exported session state: %v", err)
	}
	unlock, err := s.lock(ctx, id)
	if err != nil {
		return nil, err
	}
	defer unlock()
	return s.simpleWrite(ctx, id, req.Msg.GetWrite(), req.Msg, func(w *write) error {
		// The session keeps its own record (profile and keys): the
		// imported state's is replaced by the one this write saves.
		if err := w.e.es.ImportState(ctx, req.Msg.GetState()); err != nil {
			if errors.Is(err, engine.ErrNotPersisted) {
				return err
			}
			return invalid(err)
		}
		return nil
	})
}

// Prepare builds the context of the next turn.
func (s *Server) Prepare(ctx context.Context, req *connect.Request[servicev1.PrepareRequest]) (*connect.Response[servicev1.PrepareResponse], error) {
	id, agent, msgs := req.Msg.GetSessionId(), req.Msg.GetAgent(), req.Msg.GetMessages()
	if len(msgs) > 0 {
		if err := s.limits.checkAppend(msgs); err != nil {
			return nil, err
		}
	}
	unlock, err := s.lock(ctx, id)
	if err != nil {
		return nil, err
	}
	defer unlock()
	w, rec, err := s.beginWrite(ctx, id, req.Msg.GetWrite(), req.Msg)
	if err != nil {
		return nil, err
	}
	if rec != nil {
		out, _ := w.e.answers.find(w.key, rec.Seq).(*servicev1.PrepareResponse)
		switch {
		case out == nil: // answered before this server started: prepare again without the key
			out = &servicev1.PrepareResponse{Sequence: rec.Seq, MessageIds: rec.IDs}
		case out.PayloadTag != "" && out.PayloadTag == req.Msg.GetKnownPayloadTag():
			// The answer was kept whole; the retry holds its payload.
			out.Payload, out.System, out.PayloadUnchanged = "", "", true
		}
		out.Replayed = true
		return connect.NewResponse(out), nil
	}
	if agent != "" && !w.e.es.IsFresh() && (!w.e.es.IsTeam() || w.e.engine.Config.Agent(agent) == nil) {
		return nil, invalidf("agent %q: not an agent of context profile %q", agent, w.e.profile)
	}
	var (
		turn engine.Turn
		seq  uint64
		ids  []string
	)
	timer := s.metrics.prepareTimer(w.e.profile)
	began := time.Now()
	prepare := func() error {
		var err error
		turn, err = w.e.es.Prepare(ctx, agent)
		return err
	}
	if len(msgs) > 0 {
		seq, ids, err = s.appendAndPrepare(ctx, w, msgs, prepare)
	} else {
		seq, err = s.single(ctx, w, prepare)
	}
	if err != nil {
		return nil, err
	}
	timer()
	s.observePrepare(w.e, id, turn, time.Since(began))
	traceTurn(ctx, turn)
	payload, mediaType, system, hasSystem := turn.PayloadParts()
	var link payloadLink
	if p := turn.Prepared; p != nil && turn.Fresh == nil {
		link = payloadLink{id: p.PayloadID, extends: p.Extends, repeats: p.Repeats}
	}
	held, last := req.Msg.GetKnownPayloadTag(), w.e.tags.before(agent, link.id)
	tag := w.e.tags.tag(agent, link, payload, mediaType, system, hasSystem)
	known := held != "" && held == tag
	out := toPrepareResponse(turn)
	out.Sequence, out.PayloadTag, out.MessageIds = seq, tag, ids
	var whole string // the payload as a string, made once
	if w.key != "" {
		// A keyed retry may hold another payload than this call (its
		// answer lost, or its client started again): the answer is kept
		// whole and given back relative to what the retry holds.
		whole = string(payload)
		out.Payload, out.System = whole, system
		w.e.answers.keep(w.key, seq, out)
		out.Payload, out.System = "", ""
	}
	out.PayloadUnchanged = known
	switch {
	case known:
	case req.Msg.GetAcceptPayloadSuffix() && held != "" && last != nil && held == last.tag && last.id == link.extends:
		// The caller holds the payload this one extends: only the rest.
		n := suffixFrom(link, payload)
		out.Payload, out.PayloadPrefix, out.System = string(payload[n:]), uint64(n), system
	default:
		if whole == "" {
			whole = string(payload)
		}
		out.Payload, out.System = whole, system
	}
	if turn.Prepared != nil {
		s.metrics.tokens(w.e.profile, turn.Prepared.Budget.Used)
	}
	return connect.NewResponse(out), nil
}

// Inspect explains the session's context as it stands.
func (s *Server) Inspect(ctx context.Context, req *connect.Request[servicev1.InspectRequest]) (*connect.Response[servicev1.InspectResponse], error) {
	id := req.Msg.GetSessionId()
	e, unlock, err := s.lockedSession(ctx, id)
	if err != nil {
		return nil, err
	}
	defer unlock()
	b, warnings, err := e.es.Budget(ctx)
	if err != nil {
		return nil, err
	}
	m := e.es.Metrics()
	out := &servicev1.InspectResponse{Session: s.info(e, id), Budget: toBudget(b), Warnings: warnings,
		Prepares: int64(m.Prepares), Compactions: int64(m.Compactions)}
	for _, c := range b.Components {
		out.Components = append(out.Components, &servicev1.ComponentTokens{Name: c.Name, Tokens: int64(c.Tokens)})
	}
	var x strings.Builder
	fmt.Fprintf(&x, "session %s (profile %s, strategy %s): %d of %d available tokens used (%.0f%%, %s), calibration %.2f.\n",
		id, e.profile, e.es.Strategy(), b.CalibratedUsed, b.Available, 100*b.Utilization, b.Status, b.Calibration)
	for _, c := range b.Components {
		fmt.Fprintf(&x, "  %-16s %6d tokens\n", c.Name, c.Tokens)
	}
	fmt.Fprintf(&x, "%d prepares, %d compactions", m.Prepares, m.Compactions)
	if len(m.FreedByComponent) > 0 {
		names := make([]string, 0, len(m.FreedByComponent))
		for n := range m.FreedByComponent {
			names = append(names, n)
		}
		sort.Strings(names)
		x.WriteString("; freed:")
		for _, n := range names {
			fmt.Fprintf(&x, " %s %d", n, m.FreedByComponent[n])
		}
	}
	x.WriteString(".\n")
	out.Explain = x.String()
	return connect.NewResponse(out), nil
}

// ExportState returns the session's whole state.
func (s *Server) ExportState(ctx context.Context, req *connect.Request[servicev1.ExportStateRequest]) (*connect.Response[servicev1.ExportStateResponse], error) {
	id := req.Msg.GetSessionId()
	e, unlock, err := s.lockedSession(ctx, id)
	if err != nil {
		return nil, err
	}
	defer unlock()
	data, err := e.es.ExportState(ctx)
	if err != nil {
		return nil, err
	}
	return connect.NewResponse(&servicev1.ExportStateResponse{Sequence: e.es.StoredVersion(), State: data}), nil
}

// ListEvents lists the stored events after the last snapshot.
func (s *Server) ListEvents(ctx context.Context, req *connect.Request[servicev1.ListEventsRequest]) (*connect.Response[servicev1.ListEventsResponse], error) {
	id := req.Msg.GetSessionId()
	if err := checkID(id); err != nil {
		return nil, err
	}
	limit := int(req.Msg.GetLimit())
	if limit < 0 || limit > 1000 {
		return nil, invalidf("limit %d: want 0 to 1000", limit)
	}
	if limit == 0 {
		limit = 100
	}
	st, err := engine.LoadEvents(ctx, s.store, id)
	if errors.Is(err, engine.ErrNotStored) {
		return nil, notFound(id)
	}
	if err != nil {
		return nil, temporary(err)
	}
	out := &servicev1.ListEventsResponse{FirstAvailable: st.First, Sequence: st.Version()}
	for i, b := range st.Events {
		seq := st.First + uint64(i)
		if seq <= req.Msg.GetAfter() {
			continue
		}
		if len(out.Events) == limit {
			break
		}
		v, err := toValue(b)
		if err != nil {
			return nil, fmt.Errorf("stored event %d of %q: %w", seq, id, err)
		}
		out.Events = append(out.Events, &servicev1.Event{Sequence: seq, Event: v})
	}
	return connect.NewResponse(out), nil
}

// Health answers while the process runs.
func (s *Server) Health(context.Context, *connect.Request[servicev1.HealthRequest]) (*connect.Response[servicev1.HealthResponse], error) {
	return connect.NewResponse(&servicev1.HealthResponse{Status: "SERVING"}), nil
}

// Ready answers SERVING when the server takes calls and the store answers;
// optional plugins that failed to start are listed as problems.
func (s *Server) Ready(ctx context.Context, _ *connect.Request[servicev1.HealthRequest]) (*connect.Response[servicev1.HealthResponse], error) {
	return connect.NewResponse(s.readiness(ctx)), nil
}

func (s *Server) readiness(ctx context.Context) *servicev1.HealthResponse {
	out := &servicev1.HealthResponse{Status: "SERVING"}
	if !s.ready.Load() {
		out.Status = "NOT_SERVING"
		out.Problems = append(out.Problems, "shutting down")
	}
	if _, err := engine.StoredVersion(ctx, s.store, "ctxhost.readiness"); err != nil {
		out.Status = "NOT_SERVING"
		s.log.Warn("readiness: store does not answer", "error", err)
		out.Problems = append(out.Problems, "the store does not answer")
	}
	if problem := s.health.problem(time.Now()); problem != "" {
		out.Status = "NOT_SERVING"
		out.Problems = append(out.Problems, problem)
	}
	for _, p := range s.profiles {
		out.Problems = append(out.Problems, s.engines[p].UnavailableWarnings()...)
	}
	return out
}
