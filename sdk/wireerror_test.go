package sdk

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

func TestErrorMapping(t *testing.T) {
	tests := []struct {
		name     string
		err      error
		code     codes.Code
		sentinel error
	}{
		{"unknown op", UnknownOp("frob"), codes.Unimplemented, ErrUnknownOp},
		{"invalid args", InvalidArgs("bad %d", 1), codes.InvalidArgument, ErrInvalidArgs},
		{"not found", fmt.Errorf("lookup: %w", NotFound("item 3")), codes.NotFound, ErrNotFound},
		{"deadline", fmt.Errorf("slow: %w", context.DeadlineExceeded), codes.DeadlineExceeded, context.DeadlineExceeded},
		{"other", errors.New("disk full"), codes.Unknown, nil},
	}
	sentinels := []error{ErrUnknownOp, ErrInvalidArgs, ErrNotFound, context.DeadlineExceeded}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			wireErr := toStatus(tt.err)
			if got := status.Code(wireErr); got != tt.code {
				t.Errorf("code = %v, want %v", got, tt.code)
			}
			back := fromStatus(wireErr)
			if back.Error() != tt.err.Error() {
				t.Errorf("message = %q, want %q", back.Error(), tt.err.Error())
			}
			for _, s := range sentinels {
				if errors.Is(back, s) != (s == tt.sentinel) {
					t.Errorf("errors.Is(%v, %v) = %v", back, s, errors.Is(back, s))
				}
			}
		})
	}
}

func TestBareUnimplementedIsNotUnknownOp(t *testing.T) {
	err := fromStatus(status.Error(codes.Unimplemented, "unknown service ctxhost.plugin.v1.ContextPlugin"))
	if errors.Is(err, ErrUnknownOp) {
		t.Errorf("a missing gRPC method was mapped to ErrUnknownOp: %v", err)
	}
}
