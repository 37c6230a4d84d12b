package host_test

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/ctxhost/ctxhost/host"
	"github.com/ctxhost/ctxhost/host/history"
	"github.com/ctxhost/ctxhost/host/plaintext"
	"github.com/ctxhost/ctxhost/internal/shareddata"
	"github.com/ctxhost/ctxhost/sdk"
	"github.com/ctxhost/ctxhost/tokenizer"
	"github.com/ctxhost/ctxhost/transcript"
)

// TestTextFormatFitsRendered replays every reference trajectory through
// the plain-text assembler at small windows with every strategy: the
// prompt the model reads (labels, headers and separators included),
// counted whole, fits the window on every turn, or the turn is refused
// as over the window; it is never handed out over it.
func TestTextFormatFitsRendered(t *testing.T) {
	if testing.Short() {
		t.Skip("slow: make test runs it, make test-short (-short) leaves it out")
	}
	enc, err := tokenizer.Get(tokenizer.O200kBase)
	if err != nil {
		t.Fatal(err)
	}
	turns, over := 0, 0
	for _, path := range shareddata.RequireTrajectories(t) {
		tr, err := transcript.Load(path, transcript.FormatTraj)
		if err != nil {
			t.Fatal(err)
		}
		for _, window := range []int{4000, 8000, 16000} {
			for _, strategy := range []string{host.StrategyLazy, host.StrategyProactive, host.StrategyAdaptive, host.StrategyGraduated, host.StrategyCache} {
				s, err := host.New(host.Options{}).NewSession("text", host.Config{Encoding: tokenizer.O200kBase, Window: window, Reserved: 500,
					Strategy: host.StrategyConfig{Name: strategy}, History: host.HistoryConfig{Options: history.Options{PreserveRecent: 4}},
					Assembler: plaintext.New(), Format: "text"})
				if err != nil {
					t.Fatal(err)
				}
				for _, ev := range tr.Events {
					switch {
					case ev.Type == transcript.EventSystem:
						err = s.Conversation().SetSystemPrompt(ev.Text)
					case ev.Type == transcript.EventPrepare:
						turns++
						p, perr := s.Prepare(context.Background(), sdk.AgentIdentity{})
						if errors.Is(perr, host.ErrOverWindow) {
							over++
							continue
						}
						if perr != nil {
							t.Fatalf("%s/%d/%s: %v", path, window, strategy, perr)
						}
						n := enc.Count(string(p.Payload))
						if p.HasSystem {
							n += enc.Count(p.System)
						}
						if n > p.Budget.Available {
							t.Errorf("%s/%d/%s: the rendered prompt counts %d tokens, %d available", path, window, strategy, n, p.Budget.Available)
						}
					case ev.Message != nil:
						_, err = s.Conversation().AddMessage(*ev.Message)
					}
					if err != nil {
						t.Fatal(err)
					}
				}
			}
		}
	}
	t.Log(fmt.Sprintf("%d turns rendered within the window, %d refused as over it", turns-over, over))
}
