package team

import (
	"context"
	"testing"

	"github.com/ctxhost/ctxhost/host"
	"github.com/ctxhost/ctxhost/host/plaintext"
	"github.com/ctxhost/ctxhost/sdk"
)

// agentRouter assembles each agent's payload with its own assembler in
// its format (the fallback for the others), as the engine's router does.
type agentRouter struct {
	byAgent  map[string]host.Assembler
	formats  map[string]string
	fallback host.Assembler
}

func (r agentRouter) Info() sdk.AssemblerInfo { return sdk.AssemblerInfo{Name: "router"} }

func (r agentRouter) Assemble(ctx context.Context, req sdk.AssembleRequest) (sdk.AssembleResult, error) {
	a := r.byAgent[req.Agent.Name]
	if a == nil {
		a = r.fallback
		if a == nil {
			a = plaintext.New()
		}
	}
	req.Format = r.formats[req.Agent.Name]
	return a.Assemble(ctx, req)
}

// prepare assembles agent's payload the one way there is: a host session
// holding tm's messages and team task, viewed through tm's options, and
// one Session.Prepare for the agent with asm (nil: the plain-text
// assembler).
func prepare(t *testing.T, tm *Team, agent string, asm host.Assembler) (*host.Prepared, error) {
	t.Helper()
	if asm == nil {
		asm = plaintext.New()
	}
	v, err := NewViewer(tm.opts)
	if err != nil {
		t.Fatal(err)
	}
	s, err := host.New(host.Options{}).NewSession("team", host.Config{Window: 1 << 20, Encoding: "cl100k_base", Viewer: v, Assembler: asm})
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range tm.Messages() {
		if _, err := s.Conversation().AddMessage(m); err != nil {
			t.Fatal(err)
		}
	}
	if task, ok := tm.TeamTask(); ok {
		if err := s.Conversation().SetTeamTask(task); err != nil {
			t.Fatal(err)
		}
	}
	a := tm.opts.Agents[agent]
	return s.Prepare(context.Background(), sdk.AgentIdentity{Name: agent, Type: a.Type})
}
