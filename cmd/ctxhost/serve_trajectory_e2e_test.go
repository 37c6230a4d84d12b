package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/ctxhost/ctxhost/api/servicev1"
	"github.com/ctxhost/ctxhost/client"
	"github.com/ctxhost/ctxhost/internal/shareddata"
	"github.com/ctxhost/ctxhost/sdk"
	"github.com/ctxhost/ctxhost/transcript"
)

// TestServeReplaysTrajectories replays every reference trajectory through
// a real `ctxhost serve` as an agent drives it (set the system prompt,
// append each message, prepare before each model call), with the example
// replay profile at 8,000 tokens (compactions on most of them) and each
// assembler. Every turn's payload must be the one `ctxhost run` gives for
// the same trajectory: the service and the CLI are one engine. In a second
// pass the server is killed with SIGKILL half way through every
// trajectory and restarted on the same store; the turns after the restart
// must still be the same, the turn prepared again right after the restart
// included.
func TestServeReplaysTrajectories(t *testing.T) {
	if testing.Short() {
		t.Skip("slow: make test runs it, make test-short (-short) leaves it out")
	}
	trajs := shareddata.RequireTrajectories(t)
	root := moduleRoot(t)
	src, err := os.ReadFile(filepath.Join(root, "examples", "replay.hcl"))
	if err != nil {
		t.Fatal(err)
	}
	for _, asm := range []string{"claude", "gemini", "codex"} {
		t.Run(asm, func(t *testing.T) {
			want := map[string][][]byte{} // trajectory -> each turn's payload, from ctxhost run
			for _, traj := range trajs {
				rec := replayJSON(t, "-config", filepath.Join(root, "examples", "replay.hcl"), "-var", "bin_dir="+binDir, "-var", "assembler="+asm, traj)
				for _, turn := range rec.Turns {
					want[traj] = append(want[traj], compactJSON(t, turn.Payload))
				}
			}
			dir := t.TempDir()
			cfg := filepath.Join(dir, "replay.hcl")
			hcl := strings.Replace(string(src), `host { log_level = "error" }`,
				fmt.Sprintf("host {\n  log_level = \"error\"\n  store     = %q\n}", filepath.Join(dir, "sessions.db")), 1)
			if hcl == string(src) {
				t.Fatal("examples/replay.hcl has no `host { log_level = \"error\" }` line to add a store to")
			}
			if err := os.WriteFile(cfg, []byte(hcl), 0o600); err != nil {
				t.Fatal(err)
			}
			args := []string{"-config", cfg, "-var", "bin_dir=" + binDir, "-var", "assembler=" + asm}

			s := startServe(t, nil, args...)
			for _, traj := range trajs {
				r := newTrajectoryReplay(t, s.addr, "whole-"+filepath.Base(traj), traj)
				r.run(t, 0, len(r.events))
				r.check(t, want[traj])
			}

			// Half way, right after a turn, kill -9; restart on the same
			// store, prepare that turn again (the agent's model call
			// failed with the server), go on.
			halves := map[string]*trajectoryReplay{}
			for _, traj := range trajs {
				r := newTrajectoryReplay(t, s.addr, "killed-"+filepath.Base(traj), traj)
				r.run(t, 0, r.afterPrepare(len(r.events)/2))
				halves[traj] = r
			}
			if err := s.cmd.Process.Signal(syscall.SIGKILL); err != nil {
				t.Fatal(err)
			}
			<-s.done
			s2 := startServe(t, nil, args...)
			for _, traj := range trajs {
				r := halves[traj]
				r.c = client.New("http://"+s2.addr, client.Options{})
				again, err := r.c.Prepare(context.Background(), r.id, "")
				if err != nil {
					t.Fatal(err)
				}
				if last := r.payloads[len(r.payloads)-1]; again.Payload != string(last) {
					t.Fatalf("%s: turn %d prepared again after the restart differs from the one before", r.name, len(r.payloads))
				}
				r.run(t, r.afterPrepare(len(r.events)/2), len(r.events))
				r.check(t, want[traj])
			}
		})
	}
}

// trajectoryReplay drives one session of the service through a
// trajectory's events and keeps each prepared payload.
type trajectoryReplay struct {
	c        *client.Client
	id, name string
	events   []transcript.Event
	payloads [][]byte
}

func newTrajectoryReplay(t *testing.T, addr, id, path string) *trajectoryReplay {
	t.Helper()
	tr, err := transcript.Load(path, "")
	if err != nil {
		t.Fatal(err)
	}
	r := &trajectoryReplay{c: client.New("http://"+addr, client.Options{}), id: id, name: filepath.Base(path), events: tr.Events}
	if _, err := r.c.CreateSession(context.Background(), id, "replay"); err != nil {
		t.Fatal(err)
	}
	return r
}

// afterPrepare is the index just after the first prepare event at or
// after i.
func (r *trajectoryReplay) afterPrepare(i int) int {
	for ; i < len(r.events); i++ {
		if r.events[i].Type == transcript.EventPrepare {
			return i + 1
		}
	}
	return len(r.events)
}

// run applies events[from:to], appending each run of messages in one call.
func (r *trajectoryReplay) run(t *testing.T, from, to int) {
	t.Helper()
	ctx := context.Background()
	var pending []transcript.Event
	flush := func() {
		if len(pending) == 0 {
			return
		}
		var batch []sdk.Message
		for _, ev := range pending {
			batch = append(batch, *ev.Message)
		}
		if _, _, err := r.c.Append(ctx, r.id, client.WriteOptions{}, batch...); err != nil {
			t.Fatalf("%s line %d: %v", r.name, pending[0].Line, err)
		}
		pending = pending[:0]
	}
	for _, ev := range r.events[from:to] {
		var err error
		switch ev.Type {
		case transcript.EventMessage:
			pending = append(pending, ev)
			continue
		case transcript.EventSystem:
			flush()
			_, err = r.c.SetSystemPrompt(ctx, r.id, ev.Text, client.WriteOptions{})
		case transcript.EventPrepare:
			flush()
			var p *servicev1.PrepareResponse
			if p, err = r.c.Prepare(ctx, r.id, ev.Agent); err == nil {
				r.payloads = append(r.payloads, []byte(p.Payload))
			}
		default:
			t.Fatalf("%s line %d: event %q: the reference trajectories hold only system, message and prepare events", r.name, ev.Line, ev.Type)
		}
		if err != nil {
			t.Fatalf("%s line %d: %s: %v", r.name, ev.Line, ev.Type, err)
		}
	}
	flush()
}

// check compares the payloads prepared with want, turn by turn.
func (r *trajectoryReplay) check(t *testing.T, want [][]byte) {
	t.Helper()
	if len(r.payloads) != len(want) {
		t.Fatalf("%s: %d turns over the service, %d from ctxhost run", r.name, len(r.payloads), len(want))
	}
	for i := range want {
		if got := compactJSON(t, r.payloads[i]); !bytes.Equal(got, want[i]) {
			at := 0
			for at < len(got) && at < len(want[i]) && got[at] == want[i][at] {
				at++
			}
			from := max(at-200, 0)
			t.Fatalf("session %s (%s) turn %d: the service's payload differs from ctxhost run's at byte %d of %d (run: %d)\nservice: …%.400q\nrun:     …%.400q",
				r.id, r.name, i+1, at, len(got), len(want[i]), got[from:], want[i][from:])
		}
	}
}

// compactJSON is a JSON payload as a run record holds it: compact, with
// <, > and & escaped (as encoding/json writes them).
func compactJSON(t *testing.T, b []byte) []byte {
	t.Helper()
	var compact, out bytes.Buffer
	if err := json.Compact(&compact, b); err != nil {
		t.Fatalf("payload is not JSON: %v: %.200s", err, b)
	}
	json.HTMLEscape(&out, compact.Bytes())
	return out.Bytes()
}
