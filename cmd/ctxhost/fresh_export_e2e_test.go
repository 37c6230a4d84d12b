package main

import (
	"bytes"
	"context"
	"path/filepath"
	"testing"

	"github.com/hashicorp/go-hclog"

	"github.com/ctxhost/ctxhost/config"
	"github.com/ctxhost/ctxhost/engine"
	"github.com/ctxhost/ctxhost/transcript"
)

// TestFreshStateTravelsWithExport: a fresh session's next task (spec and
// queued ops) is part of its exported state; a fresh session that imports
// it builds the same task context, on its own plugin sessions.
func TestFreshStateTravelsWithExport(t *testing.T) {
	root := moduleRoot(t)
	cfg, diags := config.Load([]string{filepath.Join(root, "examples", "fresh.hcl")}, map[string]string{"bin_dir": binDir}, nil)
	if diags.HasErrors() {
		t.Fatal(diags)
	}
	ctx := context.Background()
	e, err := engine.Start(ctx, cfg, engine.Options{Logger: hclog.NewNullLogger()})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	tr, err := transcript.Load(filepath.Join(root, "examples", "fresh-tasks.jsonl"), "")
	if err != nil {
		t.Fatal(err)
	}
	from, err := e.NewSession("from")
	if err != nil {
		t.Fatal(err)
	}
	for _, ev := range tr.Events {
		if ev.Type == transcript.EventPrepare {
			break
		}
		if err := engine.ApplyEvent(ctx, from, ev); err != nil {
			t.Fatal(err)
		}
	}
	state, err := from.ExportState(ctx)
	if err != nil {
		t.Fatal(err)
	}
	to, err := e.NewSession("to")
	if err != nil {
		t.Fatal(err)
	}
	if err := to.RestoreState(ctx, []byte(`{"version":1,"attachment":{"ops":"not a list"}}`)); err == nil {
		t.Fatal("a fresh task state that cannot be read was imported")
	}
	if err := to.RestoreState(ctx, state); err != nil {
		t.Fatal(err)
	}
	want, err := from.Prepare(ctx, "")
	if err != nil {
		t.Fatal(err)
	}
	got, err := to.Prepare(ctx, "")
	if err != nil {
		t.Fatal(err)
	}
	wp, _ := want.Payload()
	gp, _ := got.Payload()
	if len(wp) == 0 || !bytes.Equal(wp, gp) {
		t.Fatalf("the imported session built another task context (%d bytes, want %d)", len(gp), len(wp))
	}
	if want.Fresh.Task.Session == got.Fresh.Task.Session {
		t.Fatalf("both sessions built their task on plugin session %q", got.Fresh.Task.Session)
	}
}
