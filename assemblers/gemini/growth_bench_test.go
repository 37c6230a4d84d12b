package gemini

import (
	"context"
	"fmt"
	"runtime"
	"testing"
	"time"

	"github.com/ctxhost/ctxhost/host"
	"github.com/ctxhost/ctxhost/sdk"
)

// BenchmarkGrowthInProcess: the cost of one turn as the history grows
// from 100 to 50,000 messages for a library user who runs the host and
// this assembler in its own process (sdk.NewLocalAssembler, payloads
// reused as `ctxhost run` and serve reuse them), api format, a window that
// holds every message. "unchanged" prepares a session in which nothing
// changed; "append" adds one message, then prepares. One session per size
// is built first and runs 20 turns untimed; then each iteration runs one
// turn on every size, each timed alone, so that the machine's load weighs
// on all sizes alike. ns/turn-N is a size's time per turn; x-N-of-100 is
// that time against the 100-message one's (flat is near 1). The same
// turns through plugin processes and over the service are BenchmarkGrowth
// in cmd/ctxhost.
func BenchmarkGrowthInProcess(b *testing.B) {
	asm := sdk.NewLocalAssembler(New())
	h := host.New(host.Options{})
	ctx := context.Background()
	made := 0
	open := map[int]string{} // each size's session, ended when it is built again
	build := func(b *testing.B, n int) func(bool) {
		if id, ok := open[n]; ok {
			if err := h.EndSession(ctx, id); err != nil {
				b.Fatal(err)
			}
		}
		made++
		id := fmt.Sprintf("growth-%d", made)
		open[n] = id
		s, err := h.NewSession(id, host.Config{Window: 40*n + 10000, Reserved: 1000,
			Format: FormatAPI, Assembler: asm, ReusePayload: true})
		if err != nil {
			b.Fatal(err)
		}
		if err := s.Conversation().SetSystemPrompt("You are a careful coding agent."); err != nil {
			b.Fatal(err)
		}
		msgs := make([]sdk.Message, n)
		for i := range msgs {
			msgs[i] = growthMessage(i)
		}
		if _, err := s.Conversation().AddMessages(msgs); err != nil {
			b.Fatal(err)
		}
		i := n
		return func(appendOne bool) {
			if appendOne {
				if _, err := s.Conversation().AddMessage(growthMessage(i)); err != nil {
					b.Fatal(err)
				}
				i++
			}
			if _, err := s.Prepare(ctx, sdk.AgentIdentity{}); err != nil {
				b.Fatal(err)
			}
		}
	}
	for _, kind := range []string{"unchanged", "append"} {
		b.Run(kind, func(b *testing.B) {
			runs := make([]*growthSession, len(growthSizes))
			for i, n := range growthSizes {
				runs[i] = newGrowthSession(b, n, build, kind == "append")
			}
			runtime.GC() // the garbage of building the sessions is not the turns'
			for b.Loop() {
				for _, s := range runs {
					s.turn(b)
				}
			}
			reportGrowth(b, runs)
		})
	}
}

// growthSizes are the history lengths the growth benchmark compares; the
// first is the reference.
var growthSizes = []int{100, 10000, 50000}

// growthSession is one size's session in a growth benchmark, rebuilt
// (untimed) when appended messages made it grow by a tenth (at least 50).
type growthSession struct {
	n         int
	build     func(b *testing.B, n int) func(bool)
	run       func(bool)
	appendOne bool
	appended  int
	timed     time.Duration
	turns     int
}

// growthWarmUp is how many turns run untimed on a new session.
const growthWarmUp = 20

func newGrowthSession(b *testing.B, n int, build func(b *testing.B, n int) func(bool), appendOne bool) *growthSession {
	s := &growthSession{n: n, build: build, appendOne: appendOne}
	s.rebuild(b)
	return s
}

func (s *growthSession) rebuild(b *testing.B) {
	s.run = s.build(b, s.n)
	for range growthWarmUp {
		s.run(s.appendOne)
	}
	s.appended = growthWarmUp
}

// turn runs one timed turn.
func (s *growthSession) turn(b *testing.B) {
	if s.appendOne && s.appended >= max(s.n/10, 50) {
		b.StopTimer()
		s.rebuild(b)
		runtime.GC()
		b.StartTimer()
	}
	start := time.Now()
	s.run(s.appendOne)
	s.timed += time.Since(start)
	s.turns++
	if s.appendOne {
		s.appended++
	}
}

// reportGrowth reports each size's time per turn and its ratio to the
// first size's.
func reportGrowth(b *testing.B, sessions []*growthSession) {
	base := float64(sessions[0].timed) / float64(sessions[0].turns)
	for _, s := range sessions {
		per := float64(s.timed) / float64(s.turns)
		b.ReportMetric(per, fmt.Sprintf("ns/turn-%d", s.n))
		if s != sessions[0] {
			b.ReportMetric(per/base, fmt.Sprintf("x-%d-of-%d", s.n, sessions[0].n))
		}
	}
}

// growthMessage is the i-th message of a benchmark history (~15 tokens).
func growthMessage(i int) sdk.Message {
	role := sdk.RoleUser
	if i%2 == 1 {
		role = sdk.RoleAssistant
	}
	return sdk.Message{Role: role, Content: fmt.Sprintf("message %d talks about the parser, the lexer and the tests", i)}
}
