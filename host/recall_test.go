package host

import (
	"context"
	"strings"
	"testing"

	"github.com/ctxhost/ctxhost/sdk"
	"github.com/ctxhost/ctxhost/tokenizer"
)

// TestRecallTool: a profile with the recall tool carries it in every
// request, beside the caller's own tools, counted in the budget.
func TestRecallTool(t *testing.T) {
	s, err := New(Options{}).NewSession("r", Config{Encoding: tokenizer.O200kBase, Window: 8000, Reserved: 500, RecallTool: true,
		Assembler: NewLocalAssemblerForTest(), Format: "api"})
	if err != nil {
		t.Fatal(err)
	}
	if got := s.Conversation().Tools(); len(got.Tools) != 1 || got.Tools[0].Name != sdk.RecallToolName {
		t.Fatalf("tools of a new session: %+v", got)
	}
	if err := s.Conversation().SetTools(sdk.RequestTools{Tools: []sdk.ToolDefinition{{Name: "bash"}}}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Conversation().AddMessage(sdk.Message{Role: sdk.RoleUser, Content: "hi"}); err != nil {
		t.Fatal(err)
	}
	p, err := s.Prepare(context.Background(), sdk.AgentIdentity{})
	if err != nil {
		t.Fatal(err)
	}
	if c := p.Components[0]; c.Name != sdk.ComponentTools || !strings.Contains(c.Text, `"bash"`) || !strings.Contains(c.Text, sdk.RecallToolName) {
		t.Fatalf("first component %s: %s", c.Name, c.Text)
	}
	if p.Usage[0].Tokens <= 0 {
		t.Errorf("the tools are not counted: %+v", p.Usage[0])
	}
}
