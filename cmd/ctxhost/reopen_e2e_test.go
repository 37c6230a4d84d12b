package main

import (
	"bytes"
	"context"
	"fmt"
	"path/filepath"
	"reflect"
	"slices"
	"testing"

	"github.com/hashicorp/go-hclog"

	"github.com/ctxhost/ctxhost/config"
	"github.com/ctxhost/ctxhost/engine"
	"github.com/ctxhost/ctxhost/internal/shareddata"
	"github.com/ctxhost/ctxhost/transcript"
)

// TestReopenedSessionsPrepareAsLive replays each example profile's
// transcript (plugins, multi-agent views, fresh task contexts) and every
// reference trajectory on two sessions of one engine with a SQLite store,
// the plugins and assembler as real processes: one live, the other
// unloaded and opened again from the store before every turn (as a
// restarted `ctxhost serve` or `ctxhost run -resume` opens it), and again
// before that turn is prepared a second time (a retried model call).
// Every turn must be the same on both.
func TestReopenedSessionsPrepareAsLive(t *testing.T) {
	if testing.Short() {
		t.Skip("slow: make test runs it, make test-short (-short) leaves it out")
	}
	root := moduleRoot(t)
	example := func(name string) string { return filepath.Join(root, "examples", name) }
	cases := []struct{ name, config, transcript string }{
		{"agent", example("agent.hcl"), example("coding-session.jsonl")},
		{"team", example("team.hcl"), example("team-chat.jsonl")},
		{"fresh", example("fresh.hcl"), example("fresh-tasks.jsonl")},
	}
	for _, traj := range shareddata.RequireTrajectories(t) {
		cases = append(cases, struct{ name, config, transcript string }{
			"replay/" + filepath.Base(traj), example("replay.hcl"), traj})
	}
	ctx := context.Background()
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			cfg, diags := config.Load([]string{tc.config}, map[string]string{"bin_dir": binDir}, nil)
			if diags.HasErrors() {
				t.Fatal(diags)
			}
			cfg.Host.Store = filepath.Join(t.TempDir(), "sessions.db")
			e, err := engine.Start(ctx, cfg, engine.Options{Logger: hclog.NewNullLogger()})
			if err != nil {
				t.Fatal(err)
			}
			defer e.Close()
			tr, err := transcript.Load(tc.transcript, "")
			if err != nil {
				t.Fatal(err)
			}
			live, err := e.CreateSession("live", engine.CreateOptions{})
			if err != nil {
				t.Fatal(err)
			}
			reopened, err := e.CreateSession("reopened", engine.CreateOptions{})
			if err != nil {
				t.Fatal(err)
			}
			reopen := func() {
				t.Helper()
				if err := reopened.Close(ctx); err != nil {
					t.Fatal(err)
				}
				if err := e.Unload(ctx, "reopened"); err != nil {
					t.Fatal(err)
				}
				s, restored, err := e.OpenSession(ctx, "reopened")
				if err != nil || !restored {
					t.Fatalf("reopen: restored %v, %v", restored, err)
				}
				reopened = s
			}
			turns := 0
			prepare := func(what, agent string) {
				t.Helper()
				want, werr := live.Prepare(ctx, agent)
				got, gerr := reopened.Prepare(ctx, agent)
				if (werr == nil) != (gerr == nil) {
					t.Fatalf("%s: live session: %v; reopened: %v", what, werr, gerr)
				}
				if werr == nil {
					if diff := turnDiff(want, got); diff != "" {
						t.Fatalf("%s: the reopened session prepared another turn than the live one: %s", what, diff)
					}
				}
			}
			for _, ev := range tr.Events {
				if ev.Type != transcript.EventPrepare {
					for _, s := range []*engine.Session{live, reopened} {
						if err := engine.ApplyEvent(ctx, s, ev); err != nil {
							t.Fatalf("line %d: %s: %v", ev.Line, ev.Type, err)
						}
					}
					continue
				}
				turns++
				reopen()
				prepare(fmt.Sprintf("turn %d (line %d)", turns, ev.Line), ev.Agent)
				reopen()
				prepare(fmt.Sprintf("turn %d again", turns), ev.Agent)
			}
			if turns == 0 {
				t.Fatal("the transcript has no prepare event")
			}
		})
	}
}

// turnDiff names the first difference between two prepared turns.
func turnDiff(want, got engine.Turn) string {
	wp, wm, ws, wh := want.PayloadParts()
	gp, gm, gs, gh := got.PayloadParts()
	switch {
	case !bytes.Equal(wp, gp) || wm != gm || ws != gs || wh != gh:
		return fmt.Sprintf("payload (%d bytes live, %d reopened)", len(wp), len(gp))
	case (want.Prepared == nil) != (got.Prepared == nil) || (want.Fresh == nil) != (got.Fresh == nil):
		return "kind of turn"
	case want.Fresh != nil && !reflect.DeepEqual(want.Fresh.Validation, got.Fresh.Validation):
		return fmt.Sprintf("task context validation %+v live, %+v reopened", want.Fresh.Validation, got.Fresh.Validation)
	case want.Prepared == nil:
		return ""
	}
	w, g := want.Prepared, got.Prepared
	switch {
	case !reflect.DeepEqual(w.Budget, g.Budget):
		return fmt.Sprintf("budget %+v live, %+v reopened", w.Budget, g.Budget)
	case !reflect.DeepEqual(w.Before, g.Before):
		return fmt.Sprintf("budget before compaction %+v live, %+v reopened", w.Before, g.Before)
	case w.Action != g.Action:
		return fmt.Sprintf("action %s live, %s reopened", w.Action, g.Action)
	case (w.Compaction == nil) != (g.Compaction == nil) || (w.Compaction != nil && w.Compaction.String() != g.Compaction.String()):
		return fmt.Sprintf("compaction\n  live:     %v\n  reopened: %v", w.Compaction, g.Compaction)
	case !slices.Equal(w.Warnings, g.Warnings):
		return fmt.Sprintf("warnings %q live, %q reopened", w.Warnings, g.Warnings)
	}
	return ""
}
