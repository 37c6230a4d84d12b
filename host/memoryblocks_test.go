package host

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/ctxhost/ctxhost/host/memory"
	"github.com/ctxhost/ctxhost/sdk"
	"github.com/ctxhost/ctxhost/tokenizer"
)

// blocksSource is a MemorySource over a list the test changes.
type blocksSource struct {
	mu     sync.Mutex
	blocks []memory.Block
	err    error
	agents []string
}

func (b *blocksSource) Blocks(_ context.Context, agent string) ([]memory.Block, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.agents = append(b.agents, agent)
	return append([]memory.Block(nil), b.blocks...), b.err
}

func (b *blocksSource) set(blocks ...memory.Block) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.blocks = blocks
}

func usageOf(p *Prepared, name string) (ComponentUsage, bool) {
	for _, u := range p.Usage {
		if u.Name == name {
			return u, true
		}
	}
	return ComponentUsage{}, false
}

// TestMemoryBlocksPinned: the blocks a session sees are one system
// component after the system prompt, counted by the host, never
// compacted while the history is; a change of a block changes the
// payload (no reuse), and a source that fails fails the turn.
func TestMemoryBlocksPinned(t *testing.T) {
	asm := &jsonAssembler{}
	s, _ := newTestSession(t, Config{Encoding: tokenizer.CL100kBase, Window: 1200, Reserved: 100, Assembler: asm, Format: "json"})
	src := &blocksSource{}
	persona := memory.Block{Scope: memory.Scope{Kind: memory.KindAgent, Name: "coder"}, Label: "persona",
		Value: strings.Repeat("I keep answers short and cite file paths. ", 20), Limit: 5000, Unit: memory.Chars}
	src.set(persona)
	s.SetMemory(src)
	ctx := context.Background()
	must(t, s.Conversation().SetSystemPrompt("You are a careful coding agent."))
	p, err := s.Prepare(ctx, sdk.AgentIdentity{})
	must(t, err)
	u, ok := usageOf(p, ComponentMemory)
	counter, _ := tokenizer.Get(tokenizer.CL100kBase)
	text := memory.Render([]memory.Block{persona}, counter.Count)
	if !ok || u.Slot != sdk.SlotSystem || u.Compactable || u.Priority != 0 || u.Tokens != counter.Count(text) {
		t.Fatalf("memory usage %+v (found %v); want system, priority 0, not compactable, %d tokens", u, ok, counter.Count(text))
	}
	if p.Usage[0].Name != sdk.ComponentSystemPrompt || p.Usage[1].Name != ComponentMemory {
		t.Errorf("order %v; want the system prompt, then the memory", p.Usage)
	}
	if !strings.Contains(string(p.Payload), "I keep answers short") {
		t.Errorf("payload lacks the block: %s", p.Payload)
	}

	// Fill the history past the window: the history is compacted, the
	// memory is not.
	for i := range 60 {
		_, err := s.Conversation().AddMessage(sdk.Message{Role: sdk.RoleUser, Content: fmt.Sprintf("message %d: %s", i, strings.Repeat("words of history ", 8))})
		must(t, err)
	}
	p, err = s.Prepare(ctx, sdk.AgentIdentity{})
	must(t, err)
	if p.Compaction == nil {
		t.Fatal("no compaction past the window")
	}
	for _, st := range p.Compaction.Steps {
		if st.Component == ComponentMemory {
			t.Errorf("the memory was asked to compact: %+v", st)
		}
	}
	if u2, _ := usageOf(p, ComponentMemory); u2.Tokens != u.Tokens {
		t.Errorf("memory tokens %d after compaction; want %d", u2.Tokens, u.Tokens)
	}

	// Same state: the payload is reused. A block's change: a new payload.
	calls := asm.calls
	again, err := s.Prepare(ctx, sdk.AgentIdentity{})
	must(t, err)
	if asm.calls != calls || string(again.Payload) != string(p.Payload) {
		t.Errorf("an unchanged turn called the assembler again (%d -> %d calls)", calls, asm.calls)
	}
	persona.Value = "I answer in French."
	src.set(persona)
	changed, err := s.Prepare(ctx, sdk.AgentIdentity{})
	must(t, err)
	if asm.calls == calls || !strings.Contains(string(changed.Payload), "I answer in French.") {
		t.Errorf("a changed block did not change the payload: %s", changed.Payload)
	}

	src.mu.Lock()
	src.err = errors.New("store unreachable")
	src.mu.Unlock()
	if _, err := s.Prepare(ctx, sdk.AgentIdentity{}); err == nil || !strings.Contains(err.Error(), "store unreachable") {
		t.Errorf("a failing memory source: %v; want the turn failed with its error", err)
	}
	src.mu.Lock()
	src.err = nil
	src.mu.Unlock()
	src.set()
	none, err := s.Prepare(ctx, sdk.AgentIdentity{})
	must(t, err)
	if _, ok := usageOf(none, ComponentMemory); ok {
		t.Error("a memory component with no blocks")
	}
}
