package engine

import (
	"context"
	"fmt"
	"testing"

	"github.com/ctxhost/ctxhost/config"
	"github.com/ctxhost/ctxhost/sdk"
)

// BenchmarkMultiAgentTurn: one agent's turn of a multi-agent session with
// the plan plugin and the Claude assembler as real processes, 40 team
// messages. one-prepare is the engine's turn: one Session.Prepare over the
// agent's view, one assembly. prepare-then-assemble-view is what a turn
// cost when the view was assembled beside the session's prepare: the
// session's own prepare (gather, count, assemble) and a second assembly
// of the view. Compare the two within one run.
func BenchmarkMultiAgentTurn(b *testing.B) {
	hcl := fmt.Sprintf(`
model "m" {
  context_window = 64000
  encoding       = "cl100k_base"
}
plugin "plan" { path = %q }
assembler "claude" {
  path   = %q
  format = "api"
}
context "c" {
  model     = "m"
  assembler = "claude"
  plugins   = ["plan"]
}
agent "max" {
  type               = "claude-code"
  assembler          = "claude"
  system_instruction = "You are Max."
}
agent "sarah" {
  type      = "claude-code"
  assembler = "claude"
}
`, planBinary, claudeBinary)
	ctx := context.Background()
	a, err := Start(ctx, load(b, hcl), Options{Logger: NewLogger(config.Host{LogLevel: "error"}, &syncBuffer{})})
	if err != nil {
		b.Fatal(err)
	}
	defer a.Close()
	s, err := a.NewSession("team")
	if err != nil {
		b.Fatal(err)
	}
	if _, err := s.Apply(ctx, "plan", "set_plan", []byte(`{"goal":"ship v2","tasks":[{"id":"t1","title":"pick a date"},{"id":"t2","title":"list risks"}]}`)); err != nil {
		b.Fatal(err)
	}
	for i := range 40 {
		speaker, role := "sarah", sdk.RoleAssistant
		if i%2 == 0 {
			speaker, role = "kailai", sdk.RoleUser
		}
		if _, err := s.AddMessage(sdk.Message{Name: speaker, Role: role, Content: fmt.Sprintf("message %d about the launch plan and its risks", i)}); err != nil {
			b.Fatal(err)
		}
	}
	if err := s.SetTeamTask("Plan the v2 launch"); err != nil {
		b.Fatal(err)
	}
	view, err := s.Prepare(ctx, "max")
	if err != nil {
		b.Fatal(err)
	}
	b.Run("one-prepare", func(b *testing.B) {
		for b.Loop() {
			if _, err := s.Prepare(ctx, "max"); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("prepare-then-assemble-view", func(b *testing.B) {
		req := sdk.AssembleRequest{Agent: sdk.AgentIdentity{Name: "max", Type: "claude-code"}}
		for _, c := range view.Prepared.Components {
			if c.Name != "plan" {
				req.Components = append(req.Components, c)
			}
		}
		for b.Loop() {
			if _, err := s.host.Prepare(ctx, sdk.AgentIdentity{}); err != nil {
				b.Fatal(err)
			}
			if _, err := a.Router.Assemble(ctx, req); err != nil {
				b.Fatal(err)
			}
		}
	})
}
