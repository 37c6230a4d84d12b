package host

import (
	"bytes"
	"context"
	"runtime"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/ctxhost/ctxhost/sdk"
)

// goroutineID is the number runtime.Stack gives the calling goroutine.
func goroutineID() string {
	buf := make([]byte, 64)
	buf = buf[:runtime.Stack(buf, false)]
	id, _, _ := bytes.Cut(bytes.TrimPrefix(buf, []byte("goroutine ")), []byte(" "))
	return string(id)
}

// slowAssembler is a jsonAssembler that answers only after the assembler
// deadline has passed, says whether it runs inline, and remembers the
// goroutine each call ran on. Given a deadline, it answers once release is
// closed (after the deadline, so a loaded machine cannot make the answer
// and the deadline arrive together); without one, after twice the
// deadline's length.
type slowAssembler struct {
	jsonAssembler
	inline     bool
	release    chan struct{}
	mu         sync.Mutex
	goroutines []string
}

func (a *slowAssembler) calledOn() []string {
	a.mu.Lock()
	defer a.mu.Unlock()
	return slices.Clone(a.goroutines)
}

func (a *slowAssembler) Inline(string) bool { return a.inline }

func (a *slowAssembler) Assemble(ctx context.Context, req sdk.AssembleRequest) (sdk.AssembleResult, error) {
	a.mu.Lock()
	a.goroutines = append(a.goroutines, goroutineID())
	a.mu.Unlock()
	if _, ok := ctx.Deadline(); ok && a.release != nil {
		<-ctx.Done()
		<-a.release
	} else {
		time.Sleep(2 * retryDeadline)
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.jsonAssembler.Assemble(ctx, req)
}

// TestInlineAssemblerRunsOnTheTurnsGoroutine: an assembler that says it
// runs inline (host.InlineAssembler, as the built-in ones do) is called on
// the goroutine that prepares the turn, with no watchdog: it is neither cut
// off nor retried however long it takes. One that does not is called on a
// goroutine of its own and cut off at its deadline (then retried).
func TestInlineAssemblerRunsOnTheTurnsGoroutine(t *testing.T) {
	for _, inline := range []bool{true, false} {
		asm := &slowAssembler{inline: inline, release: make(chan struct{})}
		s, _ := newTestSession(t, Config{Assembler: asm, AssemblerTimeout: retryDeadline, Format: "json"})
		if _, err := s.Conversation().AddMessage(sdk.Message{Role: sdk.RoleUser, Content: "hello"}); err != nil {
			t.Fatal(err)
		}
		out, err := s.Prepare(context.Background(), sdk.AgentIdentity{})
		close(asm.release) // the calls cut off may answer now
		turn, on := goroutineID(), asm.calledOn()
		if inline {
			if err != nil || len(out.Warnings) != 0 {
				t.Fatalf("inline: prepare: %v, warnings %q; want the slow answer taken as it is", err, out.Warnings)
			}
			if len(on) != 1 || on[0] != turn {
				t.Errorf("inline: assembled on goroutines %v, want once on the turn's own (%s)", on, turn)
			}
			continue
		}
		if err == nil {
			t.Fatalf("not inline: a call twice its deadline long was not cut off (warnings %q)", out.Warnings)
		}
		if len(on) == 0 || on[0] == turn {
			t.Errorf("not inline: assembled on goroutines %v, want another than the turn's (%s)", on, turn)
		}
	}
}
