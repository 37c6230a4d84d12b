//go:build chaos

package servicechaos

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

const memoryHCL = `
model "m" {
  context_window        = 1000000
  reserved_for_response = 1000
}
plugin "memory" { path = "%[1]s/ctxhost-plugin-memory" }
assembler "gemini" { path = "%[1]s/ctxhost-assembler-gemini" }
context "coding" {
  model     = "m"
  assembler = "gemini"
  plugins   = ["memory"]
}
host {
  store     = "%[2]s"
  log_level = "warn"
}
`

// TestGiantComponent has a plugin answer a 20 MiB component (five memory
// entries of 4 MiB): the turn must leave it out with a warning, and the
// prepare must not raise the server's peak memory by more than 64 MiB.
// Building the plugin's 20 MiB state (five 4 MiB ops, each saved with the
// plugin's whole state) must keep the server's peak RSS within 256 MiB
// (the server's default memory_limit).
func TestGiantComponent(t *testing.T) {
	cfg := filepath.Join(t.TempDir(), "serve.hcl")
	if err := os.WriteFile(cfg, []byte(fmt.Sprintf(memoryHCL, binDir, "sqlite:"+t.TempDir()+"/ctxhost.db")), 0o600); err != nil {
		t.Fatal(err)
	}
	s := start(t, cfg)
	if a := call(s.addr, "CreateSession", mustJSON(map[string]any{"sessionId": "big"})); a.status != 200 {
		t.Fatal(a.status, string(a.raw))
	}
	for i := range 5 {
		a := call(s.addr, "ApplyOp", mustJSON(map[string]any{"sessionId": "big", "plugin": "memory", "op": "store",
			"args": map[string]any{"key": fmt.Sprintf("k%d", i), "value": "v", "description": strings.Repeat(fmt.Sprintf("entry %d ", i), 4<<20/8)}}))
		if a.status != 200 {
			t.Fatalf("store %d: HTTP %d %.300s", i, a.status, a.raw)
		}
	}
	before := s.peakRSS()
	p := call(s.addr, "Prepare", mustJSON(map[string]any{"sessionId": "big"}))
	warned := strings.Contains(string(p.raw), "max_component_bytes")
	rss := s.peakRSS()
	t.Logf("REPORT %s: a 20 MiB component: prepare HTTP %d, left out with a warning %v; server peak RSS %d MiB after building the plugin's 20 MiB state, %d MiB after the prepare",
		t.Name(), p.status, warned, before>>20, rss>>20)
	if p.status != 200 || !warned {
		t.Errorf("prepare: HTTP %d %.300s; want the component left out with a warning", p.status, p.raw)
	}
	if rss > 256<<20 {
		t.Errorf("server peak RSS %d MiB, over 256 MiB", rss>>20)
	}
	if rss-before > 64<<20 {
		t.Errorf("the prepare raised the server's peak RSS by %d MiB", (rss-before)>>20)
	}
}
