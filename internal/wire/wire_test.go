package wire

import (
	"errors"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"testing"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// TestProtocolVersionMatchesProto pins ProtocolVersion1 to the .proto file.
func TestProtocolVersionMatchesProto(t *testing.T) {
	src, err := os.ReadFile(filepath.Join("..", "..", "sdk", "proto", "ctxhost", "plugin", "v1", "plugin.proto"))
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`PROTOCOL_VERSION_(\d+) = (\d+);`).FindAllSubmatch(src, -1)
	if len(m) == 0 {
		t.Fatal("no PROTOCOL_VERSION_n in plugin.proto")
	}
	latest, _ := strconv.Atoi(string(m[len(m)-1][2]))
	if latest != ProtocolVersion1 || Handshake.ProtocolVersion != ProtocolVersion1 {
		t.Errorf("proto says %d, ProtocolVersion1 = %d, handshake = %d", latest, ProtocolVersion1, Handshake.ProtocolVersion)
	}
}

func TestMaxMessageBytesFromEnv(t *testing.T) {
	tests := []struct {
		env     string
		want    int
		wantErr bool
	}{
		{"", 42, false},
		{"1048576", 1 << 20, false},
		{"-1", 0, true},
		{"lots", 0, true},
	}
	for _, tt := range tests {
		t.Setenv(EnvMaxMessageBytes, tt.env)
		got, err := MaxMessageBytesFromEnv(42)
		if got != tt.want || (err != nil) != tt.wantErr {
			t.Errorf("env %q: got %d, %v; want %d, error %v", tt.env, got, err, tt.want, tt.wantErr)
		}
	}
}

func TestKindsTravelAsDistinctCodes(t *testing.T) {
	seen := map[codes.Code]ErrorKind{}
	for _, k := range []ErrorKind{ErrorUnknownOp, ErrorInvalidArgs, ErrorNotFound, ErrorOther} {
		err := StatusError(k, "msg")
		code := status.Code(err)
		if prev, dup := seen[code]; dup {
			t.Errorf("kinds %d and %d share code %v", prev, k, code)
		}
		seen[code] = k
		if got, msg := ErrorKindOf(err); got != k || msg != "msg" {
			t.Errorf("ErrorKindOf(StatusError(%d)) = %d, %q", k, got, msg)
		}
	}
	if k, _ := ErrorKindOf(status.Error(codes.Unimplemented, "unknown method")); k != ErrorOther {
		t.Errorf("bare Unimplemented read as kind %d", k)
	}
	if !IsTransportFailure(status.Error(codes.Unavailable, "gone")) || IsTransportFailure(errors.New("x")) {
		t.Error("IsTransportFailure misclassifies")
	}
}
