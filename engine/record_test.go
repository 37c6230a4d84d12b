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
		if err := s.host.SetPosition([]byte(rec)); err != nil {
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
		stored, err := StoredRecord(ctx, second.Host.Store(), id)
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
