package wire

import (
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"testing"

	"github.com/ctxhost/ctxhost/internal/wire/pb"
	"github.com/ctxhost/ctxhost/sdk"
)

// TestProtocolVersionPinnedToProto keeps the Go constants and the .proto
// file in step: a protocol bump must touch all of them.
func TestProtocolVersionPinnedToProto(t *testing.T) {
	src, err := os.ReadFile(filepath.Join("..", "..", "sdk", "proto", "ctxhost", "plugin", "v1", "plugin.proto"))
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`(?m)^package ctxhost\.plugin\.v(\d+);`).FindSubmatch(src)
	if m == nil {
		t.Fatal("plugin.proto: no versioned package line")
	}
	pkgVersion, _ := strconv.Atoi(string(m[1]))
	if !regexp.MustCompile(`PROTOCOL_VERSION_` + string(m[1]) + ` = ` + string(m[1]) + `;`).Match(src) {
		t.Errorf("plugin.proto: package v%d has no PROTOCOL_VERSION_%d enum value", pkgVersion, pkgVersion)
	}
	for name, got := range map[string]int{
		"sdk.ProtocolVersion":   sdk.ProtocolVersion,
		"wire.ProtocolVersion1": ProtocolVersion1,
		"pb.PROTOCOL_VERSION_1": int(pb.ProtocolVersion_PROTOCOL_VERSION_1),
	} {
		if got != pkgVersion {
			t.Errorf("%s = %d, want %d (the proto package version)", name, got, pkgVersion)
		}
	}
}
