package wire

import (
	"context"
	"errors"

	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// ErrorDomain is the domain of the ErrorInfo detail attached to SDK errors.
const ErrorDomain = "ctxhost.plugin.v1"

// Kind is an SDK error signal as it crosses the wire.
type Kind int

// The error kinds and the gRPC codes they travel as:
//
//	KindUnknownOp   codes.Unimplemented    + ErrorInfo reason UNKNOWN_OP
//	KindInvalidArgs codes.InvalidArgument  + ErrorInfo reason INVALID_ARGS
//	KindNotFound    codes.NotFound         + ErrorInfo reason NOT_FOUND
//
// codes.Unimplemented alone is also what gRPC answers for a method or
// service the server does not have (an older plugin, or the wrong kind), so
// an unknown op is recognised only by the code together with its reason.
const (
	KindOther Kind = iota
	KindUnknownOp
	KindInvalidArgs
	KindNotFound
)

var kindCodes = map[Kind]struct {
	code   codes.Code
	reason string
}{
	KindUnknownOp:   {codes.Unimplemented, "UNKNOWN_OP"},
	KindInvalidArgs: {codes.InvalidArgument, "INVALID_ARGS"},
	KindNotFound:    {codes.NotFound, "NOT_FOUND"},
}

// StatusError returns the gRPC status error carrying msg as kind. KindOther
// travels as codes.Unknown; context errors keep their own codes.
func StatusError(kind Kind, msg string) error {
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

// KindOf returns the SDK error kind carried by a gRPC error and its message.
func KindOf(err error) (Kind, string) {
	st, ok := status.FromError(err)
	if !ok {
		return KindOther, err.Error()
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
	return KindOther, st.Message()
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
