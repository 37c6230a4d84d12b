package sdk

import (
	"context"
	"encoding/json"
	"fmt"
)

// The *WithState methods below are what serve.Plugin answers state-changing
// calls with: the call and the session's State right after it run under the
// session's lock, so the state returned belongs to exactly that call. The
// state is nil when the session is not a Stater. A Stater whose State fails
// after a successful call makes the call fail: the host then puts the
// session's previous state back, so the change is not kept.

// ApplyWithState is Apply returning the session's state after the op.
func (l *LocalPlugin) ApplyWithState(ctx context.Context, session, op string, args json.RawMessage) (out json.RawMessage, state []byte, err error) {
	if len(args) > 0 && !json.Valid(args) {
		return nil, nil, InvalidArgs("args of op %q are not valid JSON", op)
	}
	err = l.with(session, func(s Session) error {
		if out, err = s.Apply(ctx, op, args); err != nil {
			return err
		}
		state, err = stateAfter(s, "apply "+op)
		return err
	})
	return out, state, err
}

// CompactWithState is Compact returning the session's state after it.
func (l *LocalPlugin) CompactWithState(ctx context.Context, session string, req CompactRequest) (res CompactResult, state []byte, err error) {
	err = l.with(session, func(s Session) error {
		c, ok := s.(Compactor)
		if !ok {
			return fmt.Errorf("plugin %q cannot compact: its Session does not implement sdk.Compactor", l.info.Name)
		}
		if res, err = c.Compact(ctx, req); err != nil {
			return err
		}
		state, err = stateAfter(s, "compact")
		return err
	})
	return res, state, err
}

// PreparedWithState is Prepared returning the session's state after the
// hook.
func (l *LocalPlugin) PreparedWithState(ctx context.Context, session string, budget Budget) (state []byte, err error) {
	err = l.with(session, func(s Session) error {
		if h, ok := s.(PreparedHook); ok {
			if err := h.Prepared(ctx, budget); err != nil {
				return err
			}
		}
		state, err = stateAfter(s, "prepared")
		return err
	})
	return state, err
}

// stateAfter returns s's state (never nil for a Stater), or nil when s has
// none.
func stateAfter(s Session, call string) ([]byte, error) {
	st, ok := s.(Stater)
	if !ok {
		return nil, nil
	}
	b, err := st.State()
	if err != nil {
		return nil, fmt.Errorf("state after %s: %w", call, err)
	}
	if b == nil {
		b = []byte{}
	}
	return b, nil
}
