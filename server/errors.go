package server

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"time"

	"connectrpc.com/connect"

	"github.com/ctxhost/ctxhost/api/servicev1"
	"github.com/ctxhost/ctxhost/engine"
)

// SequenceHeader carries the session's current sequence on an ABORTED
// answer to a write whose expected_sequence did not match.
const SequenceHeader = "Ctxhost-Sequence"

func invalidf(format string, a ...any) error {
	return connect.NewError(connect.CodeInvalidArgument, fmt.Errorf(format, a...))
}

func failedPreconditionf(format string, a ...any) error {
	return connect.NewError(connect.CodeFailedPrecondition, fmt.Errorf(format, a...))
}

func notFound(id string) error {
	return connect.NewError(connect.CodeNotFound, fmt.Errorf("session %q not found", id))
}

// WarningHeader carries a warning about a write that succeeded (a usage
// report whose calibration was clamped).
const WarningHeader = "Ctxhost-Warning"

// sequenceMismatch is the ABORTED answer to a write that expected another
// sequence: the current one is in the message, the Ctxhost-Sequence header
// and a WriteResponse error detail.
func sequenceMismatch(expected, current uint64) error {
	err := connect.NewError(connect.CodeAborted, fmt.Errorf("expected sequence %d, the session is at %d", expected, current))
	err.Meta().Set(SequenceHeader, strconv.FormatUint(current, 10))
	if d, derr := connect.NewErrorDetail(&servicev1.WriteResponse{Sequence: current}); derr == nil {
		err.AddDetail(d)
	}
	return err
}

// errInvalid marks an error the caller's input caused.
type errInvalid struct{ err error }

func (e errInvalid) Error() string { return e.err.Error() }
func (e errInvalid) Unwrap() error { return e.err }

// invalid marks err as caused by the request (INVALID_ARGUMENT unless it
// maps to a more specific code).
func invalid(err error) error {
	if err == nil {
		return nil
	}
	return errInvalid{err}
}

// errTemporary marks a failure that may pass (the store or a plugin did
// not answer): UNAVAILABLE, which clients retry.
type errTemporary struct{ err error }

func (e errTemporary) Error() string { return e.err.Error() }
func (e errTemporary) Unwrap() error { return e.err }

// temporary marks err as a failure that may pass, unless it says the
// caller's input is wrong, the data is damaged or nothing is stored.
func temporary(err error) error {
	var ce *connect.Error
	if err == nil || errors.As(err, &ce) || errors.Is(err, engine.ErrDamaged) || errors.Is(err, engine.ErrNotStored) ||
		errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) || errors.Is(err, engine.ErrVersionConflict) {
		return err
	}
	var inv errInvalid
	if errors.As(err, &inv) {
		return err
	}
	return errTemporary{err}
}

// toConnect maps an error to its connect code. Errors the caller cannot
// act on are logged with their detail and answered with a generic
// message.
func (s *Server) toConnect(ctx context.Context, procedure string, err error) error {
	if err == nil {
		return nil
	}
	var ce *connect.Error
	if errors.As(err, &ce) {
		return ce
	}
	code := connect.CodeInternal
	var tmp errTemporary
	switch {
	case errors.Is(err, engine.ErrDamaged):
		s.log.Error("stored session damaged: not served", "procedure", procedure, "error", err)
		return connect.NewError(connect.CodeDataLoss, errors.New("the stored session is damaged and is not served (see the server log)"))
	case errors.Is(err, context.Canceled):
		code = connect.CodeCanceled
	case errors.Is(err, context.DeadlineExceeded) && ctx.Err() == nil:
		// Not the caller's deadline but a plugin's timeout: the plugin
		// hung, it is replaced and put back to its acknowledged state, so
		// nothing was applied and a retry reaches the new process.
		s.log.Error("a plugin did not answer in time", "procedure", procedure, "error", err)
		s.health.failed(time.Now(), "a plugin did not answer in time")
		return connect.NewError(connect.CodeUnavailable, fmt.Errorf("%w; nothing was applied, retry the call", err))
	case errors.Is(err, context.DeadlineExceeded):
		code = connect.CodeDeadlineExceeded
	case errors.Is(err, engine.ErrVersionConflict):
		code = connect.CodeAborted
		err = errors.New("another writer changed the session first; retry the call")
	case errors.Is(err, engine.ErrNotPersisted):
		s.log.Error("save failed", "procedure", procedure, "error", err)
		s.health.failed(time.Now(), "a change could not be saved")
		return connect.NewError(connect.CodeUnavailable, errors.New("the change could not be saved; it was not applied, retry the call"))
	case errors.Is(err, engine.ErrNoSession), errors.Is(err, engine.ErrNotStored):
		code = connect.CodeNotFound
	case errors.Is(err, engine.ErrStored):
		code = connect.CodeAlreadyExists
	case errors.Is(err, engine.ErrOverWindow), errors.Is(err, engine.ErrTargetNotMet):
		code = connect.CodeFailedPrecondition
	case errors.Is(err, engine.ErrInvalidArgs), errors.Is(err, engine.ErrUnknownOp), errors.Is(err, engine.ErrInvalidMessage),
		errors.Is(err, engine.ErrUnknownAgent):
		code = connect.CodeInvalidArgument
	case errors.Is(err, engine.ErrNotFound):
		code = connect.CodeNotFound
	case errors.Is(err, engine.ErrPluginDead), errors.Is(err, engine.ErrPluginUnavailable):
		code = connect.CodeUnavailable
		s.health.failed(time.Now(), "a plugin is not available")
	case errors.As(err, &tmp), errors.Is(err, engine.ErrStoreRead):
		s.log.Error("temporary failure", "procedure", procedure, "error", err)
		s.health.failed(time.Now(), "the store or a plugin did not answer")
		return connect.NewError(connect.CodeUnavailable, errors.New("a temporary failure (see the server log); nothing was changed, retry the call"))
	default:
		var inv errInvalid
		if errors.As(err, &inv) {
			code = connect.CodeInvalidArgument
		}
	}
	if code == connect.CodeInternal {
		s.log.Error("internal error", "procedure", procedure, "error", err)
		return connect.NewError(code, errors.New("internal error (see the server log)"))
	}
	return connect.NewError(code, err)
}
