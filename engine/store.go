package engine

import (
	"context"
	"fmt"

	"github.com/ctxhost/ctxhost/config"
	"github.com/ctxhost/ctxhost/host"
	"github.com/ctxhost/ctxhost/record"
	"github.com/ctxhost/ctxhost/store"
)

// openStore returns the store of the host block (nil without one or when
// ignore is set): a SQLite file, a PostgreSQL database or a directory of
// files, as package store reads the spec.
func openStore(ctx context.Context, h config.Host, ignore bool) (store.Store, error) {
	if h.Store == "" || ignore {
		return nil, nil
	}
	st, err := store.Open(ctx, h.Store)
	if err != nil {
		return nil, fmt.Errorf("host store: %w", err)
	}
	return st, nil
}

// HasStore reports whether the engine's sessions are saved to a store (the
// host block's store, unless Options.IgnoreStore).
func (e *Engine) HasStore() bool { return e.saved != nil }

// Stored reports whether the store holds state for session id (always
// false without a store).
func (e *Engine) Stored(id string) (bool, error) {
	if e.saved == nil {
		return false, nil
	}
	return record.Stored(context.Background(), e.saved, id)
}

// OpenSession opens session id through the store: a stored session is
// restored as it was saved (its system prompt and instructions included);
// otherwise a new one is made as NewSession makes it. restored reports
// which. Without a store it is NewSession.
func (e *Engine) OpenSession(ctx context.Context, id string) (es *Session, restored bool, err error) {
	s, restored, err := e.core.OpenSession(ctx, id, e.SessionConfig())
	if err != nil {
		return nil, false, err
	}
	if restored {
		es, err := e.wrap(s)
		return es, true, err
	}
	if err := e.initSession(s); err != nil {
		return nil, false, err
	}
	if err := e.seedMemory(ctx, id, ""); err != nil {
		return nil, false, err
	}
	es, err = e.wrap(s)
	return es, false, err
}

// initSession sets the profile's system prompt and instructions.
func (e *Engine) initSession(s *host.Session) error {
	if e.Context.SystemPrompt != "" {
		if err := s.Conversation().SetSystemPrompt(e.Context.SystemPrompt); err != nil {
			return fmt.Errorf("set system prompt: %w", err)
		}
	}
	if e.Context.Instructions != "" {
		if err := s.Conversation().SetInstructions(e.Context.Instructions); err != nil {
			return fmt.Errorf("set instructions: %w", err)
		}
	}
	return nil
}

// CreateOptions tune CreateSession.
type CreateOptions struct {
	// Record is saved with the session's first write (see
	// Session.SetRecord).
	Record Record
	// SystemPrompt and Instructions replace the profile's when not empty.
	SystemPrompt string
	Instructions string
}

// CreateSession creates session id like NewSession, with opts.Record set
// before the first change so that the store never holds the session
// without it, and saves it in one store write (with a store, the session
// is stored, whole, when CreateSession returns). With a store holding state for id it fails with
// an error wrapping record.ErrStored.
func (e *Engine) CreateSession(id string, opts CreateOptions) (*Session, error) {
	s, err := e.core.NewSession(id, e.SessionConfig())
	if err != nil {
		return nil, fmt.Errorf("new session %q: %w", id, err)
	}
	fail := func(err error) (*Session, error) {
		_ = e.core.Unload(context.Background(), id) // keep what another host may have stored
		return nil, err
	}
	// The session's HCL memory blocks first: written again when absent, so
	// a crash between the two leaves nothing a retry does not complete.
	if err := e.seedMemory(context.Background(), id, opts.Record.Agent); err != nil {
		return fail(err)
	}
	system, instructions := e.Context.SystemPrompt, e.Context.Instructions
	if opts.SystemPrompt != "" {
		system = opts.SystemPrompt
	}
	if opts.Instructions != "" {
		instructions = opts.Instructions
	}
	// One store write: a crash leaves the session stored whole or not at all.
	err = s.Durability().Batch(func() error {
		if pos := opts.Record.position(); pos != nil {
			if err := s.Durability().SetPosition(pos); err != nil {
				return err
			}
		}
		if system != "" {
			if err := s.Conversation().SetSystemPrompt(system); err != nil {
				return fmt.Errorf("set system prompt: %w", err)
			}
		}
		if instructions != "" {
			if err := s.Conversation().SetInstructions(instructions); err != nil {
				return fmt.Errorf("set instructions: %w", err)
			}
		}
		if e.HasStore() {
			return s.Durability().SavePosition()
		}
		return nil
	})
	if err != nil {
		return fail(err)
	}
	es, err := e.wrap(s)
	if err != nil {
		return fail(err)
	}
	return es, nil
}
