package wire

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/ctxhost/ctxhost/sdk"
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
		{"unknown op", sdk.UnknownOp("frob"), codes.Unimplemented, sdk.ErrUnknownOp},
		{"invalid args", sdk.InvalidArgs("bad %d", 1), codes.InvalidArgument, sdk.ErrInvalidArgs},
		{"not found", fmt.Errorf("lookup: %w", sdk.NotFound("item 3")), codes.NotFound, sdk.ErrNotFound},
		{"deadline", fmt.Errorf("slow: %w", context.DeadlineExceeded), codes.DeadlineExceeded, context.DeadlineExceeded},
		{"other", errors.New("disk full"), codes.Unknown, nil},
	}
	sentinels := []error{sdk.ErrUnknownOp, sdk.ErrInvalidArgs, sdk.ErrNotFound, context.DeadlineExceeded}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			wireErr := ToStatus(tt.err)
			if got := status.Code(wireErr); got != tt.code {
				t.Errorf("code = %v, want %v", got, tt.code)
			}
			back := FromStatus(wireErr)
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
	err := FromStatus(status.Error(codes.Unimplemented, "unknown service ctxhost.plugin.v1.ContextPlugin"))
	if errors.Is(err, sdk.ErrUnknownOp) {
		t.Errorf("a missing gRPC method was mapped to ErrUnknownOp: %v", err)
	}
}
