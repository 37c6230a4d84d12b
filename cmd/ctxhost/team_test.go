package main

import (
	"path/filepath"
	"strings"
	"testing"
)

// TestRunTeamExample runs the multi-agent example and checks that each
// agent's view is printed: one message routed to three
// agents, each seeing the answers before its turn, plus the plain-text
// fallback for an unknown agent type.
func TestRunTeamExample(t *testing.T) {
	if testing.Short() {
		t.Skip("slow: make test runs it, make test-short (-short) leaves it out")
	}
	root := moduleRoot(t)
	res := ctxhost(t, "", "run", "-config", filepath.Join(root, "examples", "team.hcl"), "-var", "bin_dir="+binDir,
		filepath.Join(root, "examples", "team-chat.jsonl"))
	if res.code != 0 {
		t.Fatalf("ctxhost run exited %d\nstderr:\n%s", res.code, res.stderr)
	}
	out := res.stdout
	wants := []string{
		"view of max (assembler claude",
		"    context (0):\n    current: Hi team, when can we ship v2?",
		"    | [TEAM_TASK]\n    | Plan the v2 launch",
		"view of sarah (assembler codex",
		"    context (1):\n      kailai: Hi team, when can we ship v2?\n    current: I suggest May 20",
		"    | [SYSTEM]\n    | You are Sarah",
		"view of carol (assembler gemini",
		"    context (2):\n      kailai: Hi team, when can we ship v2?\n      max: I suggest May 20",
		"    | Conversation so far:",
		`warning: [ContextManager] Unknown agentType "acme-bot", using PlainTextAssembler`,
		"view of zed (assembler plaintext",
		"current: The new onboarding screens are ready; I need the final pricing copy by May 10.\n",
	}
	last := 0
	for _, want := range wants {
		i := strings.Index(out[last:], want)
		if i < 0 {
			t.Fatalf("output lacks %q after offset %d:\n%s", want, last, out)
		}
		last += i
	}
	if strings.Contains(out, "[NEXT:") {
		t.Errorf("a routing marker reached a view:\n%s", out)
	}
}
