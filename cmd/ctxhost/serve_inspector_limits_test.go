package main

import (
	"testing"

	"github.com/ctxhost/ctxhost/config"
)

// TestInspectorPayloadsWithinTheMemoryLimit: the inspector holds its
// payloads within an eighth of memory_limit, so that at the default limit
// they cannot fill the memory budget calls are admitted on (at 256 MiB
// of payloads they did, and steady calls were refused as overloaded).
func TestInspectorPayloadsWithinTheMemoryLimit(t *testing.T) {
	for _, tc := range []struct{ limit, want int }{
		{config.DefaultMemoryLimit, config.DefaultMemoryLimit / 8},
		{4 << 20, 1 << 20},
		{0, 0}, // no limit: the inspector's own default
	} {
		if got := inspectorLimits(config.Server{MemoryLimit: tc.limit}).PayloadBytes; got != tc.want {
			t.Errorf("memory_limit %d: payloads bounded to %d, want %d", tc.limit, got, tc.want)
		}
	}
}
