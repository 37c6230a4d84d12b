package engine

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/ctxhost/ctxhost/config"
)

// Records as the previous version saved them: a transcript replay and the
// service each wrote their own JSON into the session's position.
const (
	oldReplayRecord  = `{"events":3,"chain":"9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08"}`
	oldServiceRecord = `{"profile":"first","keys":[{"k":"a","s":2,"ids":["m2"],"h":"0a1b"},{"k":"b","ids":["m1","x"],"d":2}]}`
)

var (
	wantReplay = Record{Transcript: TranscriptPosition{Events: 3,
		Chain: "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08"}}
	wantService = Record{Profile: "first", Keys: []KeyRecord{
		{Key: "a", Seq: 2, IDs: []string{"m2"}, Digest: "0a1b"},
		{Key: "b", IDs: []string{"m1", "x"}, Done: 2}}}
)

// TestOldRecordsRead: both old records read as one Record and, written
// again, give the same bytes (a store written by this version reads the
// same in the previous one).
func TestOldRecordsRead(t *testing.T) {
	for _, tt := range []struct {
		old  string
		want Record
	}{{oldReplayRecord, wantReplay}, {oldServiceRecord, wantService}} {
		got, err := decodeRecord([]byte(tt.old), nil)
		if err != nil {
			t.Fatalf("decode %s: %v", tt.old, err)
		}
		if diff := cmp.Diff(tt.want, got); diff != "" {
			t.Errorf("decode %s (-want +got):\n%s", tt.old, diff)
		}
		if b := got.position(); string(b) != tt.old {
			t.Errorf("encoded again:\n got %s\nwant %s", b, tt.old)
		}
	}
	if _, err := decodeRecord([]byte(`{"events":-1}`), nil); err == nil {
		t.Error("a negative event count was read as a record")
	}
}

// TestOpenSessionWithOldRecord: sessions the previous version stored,
// with the record of a transcript replay or of the service in their
// position, open with that record, and StoredRecord reads it without
// opening them.
func TestOpenSessionWithOldRecord(t *testing.T) {
	ctx := context.Background()
	storeDir := filepath.Join(t.TempDir(), "state")
	hcl := fmt.Sprintf(`
model "m" { context_window = 10000 }
context "c" { model = "m" }
host { store = %q }
`, storeDir)
	logger := NewLogger(config.Host{LogLevel: "error"}, &syncBuffer{})
	first, err := Start(ctx, load(t, hcl), Options{Logger: logger})
	if err != nil {
		t.Fatal(err)
	}
	old := map[string]string{"replayed": oldReplayRecord, "served": oldServiceRecord}
	for id, rec := range old {
		s, err := first.NewSession(id)
		if err != nil {
			t.Fatal(err)
		}
		// What the previous version did: its own JSON as the position,
		// saved with the next change.
		if err := s.host.Durability().SetPosition([]byte(rec)); err != nil {
			t.Fatal(err)
		}
		if _, err := s.AddMessage(Message{Role: "user", Content: "hello " + id}); err != nil {
			t.Fatal(err)
		}
	}
	first.Close()

	second, err := Start(ctx, load(t, hcl), Options{Logger: logger})
	if err != nil {
		t.Fatal(err)
	}
	defer second.Close()
	for id, want := range map[string]Record{"replayed": wantReplay, "served": wantService} {
		stored, err := StoredRecord(ctx, second.saved, id)
		if err != nil {
			t.Fatalf("%s: stored record: %v", id, err)
		}
		if diff := cmp.Diff(want, stored); diff != "" {
			t.Errorf("%s: stored record (-want +got):\n%s", id, diff)
		}
		s, restored, err := second.OpenSession(ctx, id)
		if err != nil || !restored {
			t.Fatalf("%s: open: restored %v, %v", id, restored, err)
		}
		got, err := s.Record()
		if err != nil {
			t.Fatalf("%s: record: %v", id, err)
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("%s: record (-want +got):\n%s", id, diff)
		}
		if s.MessageCount() != 1 {
			t.Errorf("%s: %d messages, want 1", id, s.MessageCount())
		}
	}
}

// TestFreshRecord: a fresh profile's record carries its next task as it
// stands, and the same task once the session is opened again.
func TestFreshRecord(t *testing.T) {
	ctx := context.Background()
	storeDir := filepath.Join(t.TempDir(), "state")
	hcl := fmt.Sprintf(`
model "m" {
  context_window        = 2400
  reserved_for_response = 600
}
plugin "plan" { path = %q }
assembler "claude" { path = %q }
context "tasks" {
  model         = "m"
  mode          = "fresh"
  assembler     = "claude"
  system_prompt = "one task at a time"
  fresh {
    system_prompt_tokens = 120
    task_spec_tokens     = 150
    reserved_tokens      = 600
    shares = { plan = 1.0 }
  }
}
host { store = %q }
`, planBinary, claudeBinary, storeDir)
	logger := NewLogger(config.Host{LogLevel: "error"}, &syncBuffer{})
	want := FreshTask{System: "one task at a time", Spec: "fix the limiter",
		Ops: []FreshOp{{Plugin: "plan", Op: "set_plan", Args: []byte(`{"goal":"g","tasks":[{"id":"t1","title":"do"}]}`)}}}
	first, err := Start(ctx, load(t, hcl), Options{Logger: logger})
	if err != nil {
		t.Fatal(err)
	}
	s, err := first.NewSession("f")
	if err != nil {
		t.Fatal(err)
	}
	if err := s.SetInput(want.Spec); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Apply(ctx, "plan", "set_plan", want.Ops[0].Args); err != nil {
		t.Fatal(err)
	}
	check := func(when string, s *Session) {
		t.Helper()
		r, err := s.Record()
		if err != nil {
			t.Fatalf("%s: %v", when, err)
		}
		if r.Fresh == nil {
			t.Fatalf("%s: no fresh task in the record", when)
		}
		if diff := cmp.Diff(want, *r.Fresh); diff != "" {
			t.Errorf("%s: fresh task (-want +got):\n%s", when, diff)
		}
	}
	check("before the store", s)
	first.Close()
	second, err := Start(ctx, load(t, hcl), Options{Logger: logger})
	if err != nil {
		t.Fatal(err)
	}
	defer second.Close()
	s, restored, err := second.OpenSession(ctx, "f")
	if err != nil || !restored {
		t.Fatalf("open: restored %v, %v", restored, err)
	}
	check("opened again", s)
}

// TestImportStateKeepsRecord: an imported state brings its messages but
// not the record of the session it was exported from; the importing
// session's own record stays, in memory and in the store, and one store
// write saves both.
func TestImportStateKeepsRecord(t *testing.T) {
	ctx := context.Background()
	hcl := fmt.Sprintf(`
model "m" { context_window = 10000 }
context "c" { model = "m" }
host { store = %q }
`, filepath.Join(t.TempDir(), "state"))
	e, err := Start(ctx, load(t, hcl), Options{Logger: NewLogger(config.Host{LogLevel: "error"}, &syncBuffer{})})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	from, err := e.CreateSession("from", CreateOptions{Record: wantReplay})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := from.AddMessage(Message{Role: "user", Content: "exported"}); err != nil {
		t.Fatal(err)
	}
	exported, err := from.ExportState(ctx)
	if err != nil {
		t.Fatal(err)
	}
	into, err := e.CreateSession("into", CreateOptions{Record: wantService})
	if err != nil {
		t.Fatal(err)
	}
	before := into.StoredVersion()
	if err := into.ImportState(ctx, exported); err != nil {
		t.Fatal(err)
	}
	if got := into.StoredVersion(); got != before+1 {
		t.Errorf("import saved versions %d..%d; want one write", before, got)
	}
	got, err := into.Record()
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(wantService, got); diff != "" {
		t.Errorf("record after import (-want +got):\n%s", diff)
	}
	stored, err := StoredRecord(ctx, e.saved, "into")
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(wantService, stored); diff != "" {
		t.Errorf("stored record after import (-want +got):\n%s", diff)
	}
	if into.MessageCount() != 1 {
		t.Errorf("imported %d messages, want 1", into.MessageCount())
	}
	if err := into.ImportState(ctx, []byte(`{"version":99}`)); err == nil {
		t.Error("a state of an unknown version was imported")
	}
	if got, _ := into.Record(); !cmp.Equal(wantService, got) {
		t.Errorf("a refused import changed the record to %+v", got)
	}
}
