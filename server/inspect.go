package server

import (
	"context"
	"errors"
	"time"

	"connectrpc.com/connect"

	"github.com/ctxhost/ctxhost/engine"
	"github.com/ctxhost/ctxhost/server/callpath"
	"github.com/ctxhost/ctxhost/server/inspector"
)

// observeCall records a call path call's turn in the inspector.
func (s *Server) observeCall(o callpath.Observed) {
	c := inspector.Call{Session: o.Session, Profile: o.Profile, Source: "callpath", Upstream: o.Upstream, Endpoint: o.Endpoint,
		Model: o.Model, Outcome: o.Outcome, Status: o.Status, Duration: o.Duration}
	if o.UsageKnown {
		c.Usage = &inspector.Usage{Input: o.InputTokens, Output: o.OutputTokens, CacheRead: o.CacheRead, CacheCreate: o.CacheCreation}
	}
	if eng := s.engines[o.Profile]; eng != nil {
		c.Warning, c.Critical = eng.Context.Strategy.WarningThreshold, eng.Context.Strategy.CriticalThreshold
	}
	s.inspect.Record(c, o.Prepared)
}

// observePrepare records a service Prepare's turn in the inspector.
func (s *Server) observePrepare(e *entry, id string, turn engine.Turn, took time.Duration) {
	if s.inspect == nil || turn.Prepared == nil || turn.Fresh != nil {
		return
	}
	c := inspector.Call{Session: id, Profile: e.profile, Source: "service", Endpoint: "Prepare", Outcome: "ok", Duration: took}
	c.Warning, c.Critical = e.es.Thresholds()
	s.inspect.Record(c, turn.Prepared)
}

// inspectorOriginals serves the inspector the stored messages.
type inspectorOriginals struct{ s *Server }

// Original implements inspector.Originals.
func (o inspectorOriginals) Original(ctx context.Context, session, id string) (engine.HistoryEntry, error) {
	e, unlock, err := o.s.lockedSession(ctx, session)
	if connect.CodeOf(err) == connect.CodeNotFound || connect.CodeOf(err) == connect.CodeInvalidArgument {
		return engine.HistoryEntry{}, inspector.ErrNotFound
	}
	if err != nil {
		return engine.HistoryEntry{}, err
	}
	defer unlock()
	entries, _, err := e.es.History(engine.HistoryQuery{IDs: []string{id}})
	if err != nil || len(entries) == 0 {
		return engine.HistoryEntry{}, errors.Join(inspector.ErrNotFound, err)
	}
	return entries[0], nil
}

// Memory implements inspector.Memory: the blocks the session's turns see.
func (o inspectorOriginals) Memory(ctx context.Context, session string) ([]inspector.Block, error) {
	e, unlock, err := o.s.lockedSession(ctx, session)
	if connect.CodeOf(err) == connect.CodeNotFound || connect.CodeOf(err) == connect.CodeInvalidArgument {
		return nil, inspector.ErrNotFound
	}
	if err != nil {
		return nil, err
	}
	scopes, eng := e.es.MemoryScopes(), e.engine
	unlock()
	if len(scopes) == 0 {
		return nil, nil
	}
	blocks, err := eng.MemoryBlocks(ctx, scopes...)
	if err != nil {
		return nil, err
	}
	count, err := eng.MemoryCounter()
	if err != nil {
		return nil, err
	}
	var out []inspector.Block
	for _, b := range engine.VisibleBlocks(blocks) {
		out = append(out, inspector.Block{Scope: b.Scope.String(), Label: b.Label, Description: b.Description, Value: b.Value,
			Size: b.Size(count), Limit: b.Limit, Unit: b.Unit, ReadOnly: b.ReadOnly, Version: b.Version})
	}
	return out, nil
}

// inspectorErr is err as the inspector reads it: an unknown or invalid
// session is inspector.ErrNotFound.
func inspectorErr(err error) error {
	if c := connect.CodeOf(err); err != nil && (c == connect.CodeNotFound || c == connect.CodeInvalidArgument) {
		return errors.Join(inspector.ErrNotFound, err)
	}
	return err
}

// Checkpoints implements inspector.Checkpoints: the session's kept
// checkpoints and its stored version.
func (o inspectorOriginals) Checkpoints(ctx context.Context, session string) ([]engine.Checkpoint, uint64, error) {
	eng, err := o.s.storedEngine(ctx, session)
	if err != nil {
		return nil, 0, inspectorErr(err)
	}
	cps, err := eng.Checkpoints(ctx, session)
	if err != nil {
		return nil, 0, err
	}
	version, err := engine.StoredVersion(ctx, o.s.store, session)
	return cps, version, err
}

// CheckpointState implements inspector.Checkpoints.
func (o inspectorOriginals) CheckpointState(ctx context.Context, session string, version uint64, q engine.HistoryQuery) (engine.CheckpointState, error) {
	eng, err := o.s.storedEngine(ctx, session)
	if err != nil {
		return engine.CheckpointState{}, inspectorErr(err)
	}
	return eng.CheckpointState(ctx, session, version, q)
}
