package host

import (
	"context"
	"strings"
	"testing"

	"github.com/ctxhost/ctxhost/sdk"
	"github.com/ctxhost/ctxhost/sdk/assembly"
	"github.com/ctxhost/ctxhost/tokenizer"
)

// TestRestoredSessionWeighsItsLastPayload: a session restored from its
// saved state compares its next payload with its last one as the live
// session does (the cache report's prefix, costs and the credit the
// cache strategy spends), whether the history was only appended to since
// that payload or changed otherwise (then neither compares with it).
func TestRestoredSessionWeighsItsLastPayload(t *testing.T) {
	ctx := context.Background()
	h := New(Options{})
	pricing := assembly.AnthropicPricing
	newSession := func(id string) *Session {
		s, err := h.NewSession(id, Config{Encoding: tokenizer.O200kBase, Window: 1 << 20, Reserved: 100, Pricing: &pricing,
			Strategy: StrategyConfig{Name: StrategyCache}, Assembler: NewLocalAssemblerForTest(), Format: "api"})
		must(t, err)
		must(t, s.Conversation().SetSystemPrompt("You are careful. "+strings.Repeat("Read before you edit. ", 200)))
		return s
	}
	add := func(s *Session, k int) {
		for i := range k {
			_, err := s.Conversation().AddMessage(sdk.Message{Role: sdk.RoleUser, Content: strings.Repeat("observation line ", 40+i)})
			must(t, err)
		}
	}
	for _, edit := range []bool{false, true} {
		live := newSession("live")
		add(live, 6)
		_, err := live.Prepare(ctx, sdk.AgentIdentity{})
		must(t, err)
		if edit { // the view changes other than by an append
			must(t, live.Conversation().ClearHistory())
			add(live, 3)
		}
		add(live, 2)
		state, err := live.Durability().Export(ctx)
		must(t, err)
		restored := newSession("restored")
		must(t, restored.Durability().Restore(ctx, state))

		p1, err := live.Prepare(ctx, sdk.AgentIdentity{})
		must(t, err)
		p2, err := restored.Prepare(ctx, sdk.AgentIdentity{})
		must(t, err)
		c1, c2 := p1.Cache, p2.Cache
		if c1 == nil || c2 == nil {
			t.Fatal("no cache report")
		}
		if c1.PrefixKept != c2.PrefixKept || c1.Managed != c2.Managed || c1.Unmanaged != c2.Unmanaged {
			t.Errorf("edit %v: the restored session's report %+v, the live one's %+v", edit, *c2, *c1)
		}
		if c1.PrefixKept == edit {
			t.Errorf("edit %v: prefix kept %v", edit, c1.PrefixKept)
		}
		if live.plan.pressure.Credit != restored.plan.pressure.Credit {
			t.Errorf("edit %v: credit %v restored, %v live", edit, restored.plan.pressure.Credit, live.plan.pressure.Credit)
		}
		h.sessions = map[string]*Session{}
	}
}
