package wire

import (
	"context"
	"errors"

	"github.com/ctxhost/ctxhost/sdk"
	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// ErrorDomain is the domain of the ErrorInfo detail attached to SDK errors.
const ErrorDomain = "ctxhost.plugin.v1"

// ErrorKind is an SDK error signal (an sdk sentinel) as it crosses the wire.
type ErrorKind int

// The error kinds and the gRPC codes they travel as:
//
//	ErrorUnknownOp   codes.Unimplemented    + ErrorInfo reason UNKNOWN_OP
//	ErrorInvalidArgs codes.InvalidArgument  + ErrorInfo reason INVALID_ARGS
//	ErrorNotFound    codes.NotFound         + ErrorInfo reason NOT_FOUND
//	ErrorUnknownBase codes.FailedPrecondition + ErrorInfo reason UNKNOWN_BASE
//
// ErrorUnknownBase is the assembler protocol's own signal, no SDK
// sentinel: a delta request names a base the assembler does not hold (it
// restarted, or evicted it), and the host sends the whole request.
//
// codes.Unimplemented alone is also what gRPC answers for a method or
// service the server does not have (an older plugin, or the wrong kind), so
// an unknown op is recognised only by the code together with its reason.
const (
	ErrorOther ErrorKind = iota
	ErrorUnknownOp
	ErrorInvalidArgs
	ErrorNotFound
	ErrorUnknownBase
)

var kindCodes = map[ErrorKind]struct {
	code   codes.Code
	reason string
}{
	ErrorUnknownOp:   {codes.Unimplemented, "UNKNOWN_OP"},
	ErrorInvalidArgs: {codes.InvalidArgument, "INVALID_ARGS"},
	ErrorNotFound:    {codes.NotFound, "NOT_FOUND"},
	ErrorUnknownBase: {codes.FailedPrecondition, "UNKNOWN_BASE"},
}

// StatusError returns the gRPC status error carrying msg as kind. ErrorOther
// travels as codes.Unknown; context errors keep their own codes.
func StatusError(kind ErrorKind, msg string) error {
	kc, ok := kindCodes[kind]
	if !ok {
		return status.Error(codes.Unknown, msg)
	}
	st, err := status.New(kc.code, msg).WithDetails(&errdetails.ErrorInfo{Reason: kc.reason, Domain: ErrorDomain})
	if err != nil {
		return status.Error(kc.code, msg)
	}
	return st.Err()
}

// ContextStatus returns the status error for a context error (Canceled or
// DeadlineExceeded), or nil when err is neither.
func ContextStatus(err error) error {
	switch {
	case errors.Is(err, context.DeadlineExceeded):
		return status.Error(codes.DeadlineExceeded, err.Error())
	case errors.Is(err, context.Canceled):
		return status.Error(codes.Canceled, err.Error())
	}
	return nil
}

// ErrorKindOf returns the SDK error kind carried by a gRPC error and its
// message.
func ErrorKindOf(err error) (ErrorKind, string) {
	st, ok := status.FromError(err)
	if !ok {
		return ErrorOther, err.Error()
	}
	for _, d := range st.Details() {
		info, ok := d.(*errdetails.ErrorInfo)
		if !ok || info.GetDomain() != ErrorDomain {
			continue
		}
		for k, kc := range kindCodes {
			if kc.reason == info.GetReason() && kc.code == st.Code() {
				return k, st.Message()
			}
		}
	}
	return ErrorOther, st.Message()
}

// IsTransportFailure reports whether err means the plugin could not be
// reached at all (process gone, connection closed or refused), as opposed
// to the plugin answering with an error.
func IsTransportFailure(err error) bool {
	st, ok := status.FromError(err)
	if !ok {
		return false
	}
	return st.Code() == codes.Unavailable
}

// ToStatus turns a plugin author's error into the gRPC status error that
// carries it: the SDK sentinels (sdk.ErrUnknownOp, sdk.ErrInvalidArgs,
// sdk.ErrNotFound) and context errors keep their meaning, anything else
// travels as codes.Unknown. The message is err's.
func ToStatus(err error) error {
	if err == nil {
		return nil
	}
	switch {
	case errors.Is(err, sdk.ErrUnknownOp):
		return StatusError(ErrorUnknownOp, err.Error())
	case errors.Is(err, sdk.ErrInvalidArgs):
		return StatusError(ErrorInvalidArgs, err.Error())
	case errors.Is(err, sdk.ErrNotFound):
		return StatusError(ErrorNotFound, err.Error())
	}
	if st := ContextStatus(err); st != nil {
		return st
	}
	return StatusError(ErrorOther, err.Error())
}

// RemoteError is an error a plugin process answered with, as the host sees
// it: the plugin's message, unwrapping to the SDK sentinel it was sent as
// (sdk.ErrUnknownOp, sdk.ErrInvalidArgs, sdk.ErrNotFound), to a context
// error, or to nothing for any other failure.
type RemoteError struct {
	Msg      string
	Sentinel error
}

// Error returns the plugin's message.
func (e *RemoteError) Error() string { return e.Msg }

// Unwrap returns the sentinel the error was sent as, if any.
func (e *RemoteError) Unwrap() error { return e.Sentinel }

// FromStatus turns a gRPC error from a plugin back into a *RemoteError
// (nil stays nil). Whether the plugin could be reached at all is a separate
// question: see IsTransportFailure, which must be asked of the gRPC error.
func FromStatus(err error) error {
	if err == nil {
		return nil
	}
	kind, msg := ErrorKindOf(err)
	re := &RemoteError{Msg: msg}
	switch kind {
	case ErrorUnknownOp:
		re.Sentinel = sdk.ErrUnknownOp
	case ErrorInvalidArgs:
		re.Sentinel = sdk.ErrInvalidArgs
	case ErrorNotFound:
		re.Sentinel = sdk.ErrNotFound
	default:
		switch status.Code(err) {
		case codes.DeadlineExceeded:
			re.Sentinel = context.DeadlineExceeded
		case codes.Canceled:
			re.Sentinel = context.Canceled
		}
	}
	return re
}
