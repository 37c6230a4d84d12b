package host_test

import (
	"bytes"
	"context"
	"fmt"
	"sync"
	"syscall"
	"testing"

	"github.com/ctxhost/ctxhost/host"
	"github.com/ctxhost/ctxhost/pluginhost"
	"github.com/ctxhost/ctxhost/sdk"
	"github.com/hashicorp/go-hclog"
)

// launchAssembler launches an assembler binary with extra environment
// and deltas (nil: the client's own), killed when the test ends.
func launchAssembler(t *testing.T, name string, deltas *pluginhost.Deltas, env ...string) *pluginhost.Client {
	t.Helper()
	c, err := pluginhost.Launch(context.Background(), pluginhost.Spec{Name: name, Kind: pluginhost.KindAssembler, Path: binary(name),
		Logger: hclog.NewNullLogger(), Env: env, Deltas: deltas})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Kill)
	return c
}

// swappable is an assembler that can be replaced between turns (a
// relaunched process).
type swappable struct {
	mu sync.Mutex
	a  host.Assembler
}

func (s *swappable) set(a host.Assembler) { s.mu.Lock(); s.a = a; s.mu.Unlock() }

func (s *swappable) get() host.Assembler { s.mu.Lock(); defer s.mu.Unlock(); return s.a }

func (s *swappable) Info() sdk.AssemblerInfo { return s.get().Info() }

func (s *swappable) Assemble(ctx context.Context, req sdk.AssembleRequest) (sdk.AssembleResult, error) {
	return s.get().Assemble(ctx, req)
}

// deltaSession is a session over asm whose window (tokens) forces
// compactions as it grows; reuse: Config.ReusePayload.
func deltaSession(t *testing.T, h *host.Host, id string, asm host.Assembler, format string, window int, reuse bool) *host.Session {
	t.Helper()
	s, err := h.NewSession(id, host.Config{Window: window, Reserved: 200, Format: format, Assembler: asm, ReusePayload: reuse})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Conversation().SetSystemPrompt("You are a careful coding agent."); err != nil {
		t.Fatal(err)
	}
	return s
}

// turn adds k user messages (each answered now and then, with a tool
// exchange or a text), sets the input
// and prepares; the payload must equal the one the same assembler builds
// from the whole request (no session: never a delta).
func turn(t *testing.T, s *host.Session, asm host.Assembler, k, n int) *host.Prepared {
	t.Helper()
	for i := range k {
		msgs := []sdk.Message{{Role: sdk.RoleUser, Content: fmt.Sprintf("message %d.%d about the parser", n, i)}}
		switch (n + i) % 3 {
		case 1:
			id := fmt.Sprint("c", n, ".", i)
			msgs = append(msgs,
				sdk.Message{Role: sdk.RoleAssistant, Content: "looking", ToolCalls: []sdk.ToolCall{{ID: id, Name: "bash", Arguments: `{"cmd":"ls"}`}}},
				sdk.Message{Role: sdk.RoleTool, ToolCallID: id, Content: fmt.Sprintf("output %d of a long listing: a.go b.go c.go d.go e.go f.go", n), Kind: sdk.KindObservation})
		case 2:
			msgs = append(msgs, sdk.Message{Role: sdk.RoleAssistant, Content: fmt.Sprint("answer ", n)})
		}
		for _, m := range msgs {
			if _, err := s.Conversation().AddMessage(m); err != nil {
				t.Fatal(err)
			}
		}
	}
	if n%3 == 0 {
		if err := s.Conversation().SetInput(fmt.Sprint("input ", n)); err != nil {
			t.Fatal(err)
		}
	}
	p, err := s.Prepare(context.Background(), sdk.AgentIdentity{})
	if err != nil {
		t.Fatalf("turn %d: %v", n, err)
	}
	whole, err := asm.Assemble(context.Background(), sdk.AssembleRequest{Components: p.Components, Budget: p.Budget, Format: s.Config().Format})
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(p.Payload, whole.Payload) {
		t.Fatalf("turn %d: the payload differs from the whole request's:\n got: %s\nwant: %s", n, p.Payload, whole.Payload)
	}
	return p
}

// TestAssemblerDelta: through a real assembler process (the joiner and
// the Gemini assembler), turns that append, set the input and compact are
// sent as deltas, and every payload equals the one built from the whole
// request.
//
// Without ReusePayload, no payload returned ever changes afterwards; with
// it, payloads that grew are built in the memory of the last one, unless
// the last one is kept (KeepPayloads: its caller is still sending it
// while the next turn is prepared).
func TestAssemblerDelta(t *testing.T) {
	for _, tc := range []struct {
		name, format string
		reuse, keep  bool
	}{{"joiner", "text", false, false}, {"assembler-gemini", "api", false, false}, {"assembler-gemini", "api", true, false},
		{"assembler-gemini", "api", true, true}} {
		t.Run(fmt.Sprintf("%s/reuse=%v/keep=%v", tc.name, tc.reuse, tc.keep), func(t *testing.T) {
			c := launchAssembler(t, tc.name, nil)
			if c.Assembler.Deltas() == nil {
				t.Fatal("the assembler does not declare the delta capability")
			}
			h := host.New(host.Options{})
			s := deltaSession(t, h, "d1", c.Assembler, tc.format, 1500, tc.reuse)
			compacted, inPlace := 0, 0
			var given, copies [][]byte
			release := func() {}
			for n := range 60 {
				p := turn(t, s, c.Assembler, 1+n%3, n)
				release()
				if tc.keep {
					release = s.Planning().KeepPayloads() // this payload is still being sent while the next turn is prepared
				}
				if p.Compaction != nil {
					compacted++
				}
				if len(given) > 0 && &given[len(given)-1][0] == &p.Payload[0] {
					inPlace++
				}
				given, copies = append(given, p.Payload), append(copies, bytes.Clone(p.Payload))
			}
			if compacted == 0 {
				t.Error("no turn compacted: the window is too large for the test")
			}
			if tc.reuse && !tc.keep && inPlace < 20 {
				t.Errorf("%d of 60 payloads were built in the last one's memory, want most of those that only grew", inPlace)
			}
			if !tc.reuse || tc.keep {
				if inPlace > 0 {
					t.Errorf("%d payloads share memory with the last one (kept: %v)", inPlace, tc.keep)
				}
				for i := range given {
					if !bytes.Equal(given[i], copies[i]) {
						t.Fatalf("turn %d: the payload returned changed afterwards", i)
					}
				}
			}
			st := c.Assembler.Deltas().Stats()
			if st.Deltas < 50 || st.Resent != 0 {
				t.Errorf("%d requests went as deltas, %d resent; want nearly all deltas, none resent", st.Deltas, st.Resent)
			}
			if st.PayloadReused < st.PayloadBytes/2 {
				t.Errorf("%d of %d payload bytes were the start of the last payload, want most", st.PayloadReused, st.PayloadBytes)
			}
		})
	}
}

// TestAssemblerDeltaRelaunch: a killed assembler is launched again with
// its predecessor's Deltas; the first delta to it names a base it does
// not hold, it answers UNKNOWN_BASE, the host sends that request whole,
// and the turns after go as deltas again.
func TestAssemblerDeltaRelaunch(t *testing.T) {
	for _, tc := range []struct {
		name, format string
		reuse        bool
	}{{"joiner", "text", false}, {"assembler-gemini", "api", true}} {
		t.Run(fmt.Sprintf("%s/reuse=%v", tc.name, tc.reuse), func(t *testing.T) {
			deltas := pluginhost.NewDeltas(0)
			first := launchAssembler(t, tc.name, deltas)
			asm := &swappable{a: first.Assembler}
			s := deltaSession(t, host.New(host.Options{}), "r1", asm, tc.format, 100000, tc.reuse)
			for n := range 5 {
				turn(t, s, asm, 1, n)
			}
			if err := syscall.Kill(first.Pid(), syscall.SIGKILL); err != nil {
				t.Fatal(err)
			}
			waitExited(t, first)
			asm.set(launchAssembler(t, tc.name, deltas).Assembler)
			before := deltas.Stats().Deltas
			for n := 5; n < 10; n++ {
				turn(t, s, asm, 1, n)
			}
			if st := deltas.Stats(); st.Resent != 1 || st.Deltas-before != 5 {
				t.Errorf("after the relaunch: %d deltas, %d resent whole; want 5 and 1", st.Deltas-before, st.Resent)
			}
		})
	}
}

// TestAssemblerDeltaEviction: an assembler that keeps two streams serves
// three sessions in turn; each evicted base is answered UNKNOWN_BASE and
// sent whole, and every payload is right.
func TestAssemblerDeltaEviction(t *testing.T) {
	c := launchAssembler(t, "joiner", nil, "CTXHOST_TEST_DELTA_BASES=2")
	h := host.New(host.Options{})
	var sessions []*host.Session
	for i := range 3 {
		sessions = append(sessions, deltaSession(t, h, fmt.Sprint("e", i), c.Assembler, "text", 100000, true))
	}
	for n := range 12 {
		turn(t, sessions[n%3], c.Assembler, 1, n)
	}
	if resent := c.Assembler.Deltas().Stats().Resent; resent != 9 {
		t.Errorf("%d requests resent whole, want 9 (every delta: three streams, two kept)", resent)
	}
}

// TestAssemblerWithoutDelta: an assembler that does not declare the
// capability gets whole requests, as before it existed.
func TestAssemblerWithoutDelta(t *testing.T) {
	c := launchAssembler(t, "joiner", nil, "CTXHOST_TEST_DELTA_BASES=0")
	if c.Assembler.Deltas() != nil {
		t.Fatal("delta capability declared with CTXHOST_TEST_DELTA_BASES=0")
	}
	s := deltaSession(t, host.New(host.Options{}), "w1", c.Assembler, "text", 1500, false)
	for n := range 20 {
		turn(t, s, c.Assembler, 2, n)
	}
}
