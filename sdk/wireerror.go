package sdk

import (
	"context"
	"errors"

	"github.com/ctxhost/ctxhost/internal/wire"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// RemoteError is an error returned by a plugin process. It keeps the
// plugin's message and unwraps to the SDK sentinel it was sent as
// (ErrUnknownOp, ErrInvalidArgs, ErrNotFound), to a context error, or to
// nothing for any other failure.
type RemoteError struct {
	Msg      string
	Sentinel error
	Code     codes.Code
}

// Error returns the plugin's message.
func (e *RemoteError) Error() string { return e.Msg }

// Unwrap returns the sentinel the error was sent as, if any.
func (e *RemoteError) Unwrap() error { return e.Sentinel }

// GRPCStatus lets status.FromError see the original gRPC code.
func (e *RemoteError) GRPCStatus() *status.Status { return status.New(e.Code, e.Msg) }

// toStatus turns an author's error into the gRPC status error that carries it.
func toStatus(err error) error {
	if err == nil {
		return nil
	}
	switch {
	case errors.Is(err, ErrUnknownOp):
		return wire.StatusError(wire.KindUnknownOp, err.Error())
	case errors.Is(err, ErrInvalidArgs):
		return wire.StatusError(wire.KindInvalidArgs, err.Error())
	case errors.Is(err, ErrNotFound):
		return wire.StatusError(wire.KindNotFound, err.Error())
	}
	if st := wire.ContextStatus(err); st != nil {
		return st
	}
	return wire.StatusError(wire.KindOther, err.Error())
}

// fromStatus turns a gRPC error from a plugin back into a *RemoteError.
func fromStatus(err error) error {
	if err == nil {
		return nil
	}
	kind, msg := wire.KindOf(err)
	re := &RemoteError{Msg: msg, Code: status.Code(err)}
	switch kind {
	case wire.KindUnknownOp:
		re.Sentinel = ErrUnknownOp
	case wire.KindInvalidArgs:
		re.Sentinel = ErrInvalidArgs
	case wire.KindNotFound:
		re.Sentinel = ErrNotFound
	default:
		switch re.Code {
		case codes.DeadlineExceeded:
			re.Sentinel = context.DeadlineExceeded
		case codes.Canceled:
			re.Sentinel = context.Canceled
		}
	}
	return re
}
