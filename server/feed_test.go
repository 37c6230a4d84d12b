package server

import (
	"bufio"
	"context"
	"fmt"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ctxhost/ctxhost/api/servicev1"
	"github.com/ctxhost/ctxhost/store/sqlite"
)

// newFeedServer is a test server over a SQLite file (a store with an
// event feed).
func newFeedServer(t *testing.T) *Server {
	t.Helper()
	dir := t.TempDir()
	st, err := sqlite.New(filepath.Join(dir, "s.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	return newTestServerOn(t, dir, st)
}

// feedLine is a feed event as "session kind".
func feedLine(e sseEvent) string { return fmt.Sprintf("%v %s", e.data["session_id"], e.event) }

// TestFeedSSE: every session's events in one stream, in the order of
// their store-wide sequences (each its id), what each kind says (the
// message added, the budget, each compaction step's freed tokens, the
// memory block), a new event while connected, a reconnect with
// Last-Event-ID resuming after it, filters by session and kind.
func TestFeedSSE(t *testing.T) {
	ctx := context.Background()
	s := newFeedServer(t)
	c := client(t, s)
	base := serveEventsHTTP(t, s)
	for _, id := range []string{"a", "b"} {
		if _, err := c.CreateSession(ctx, req(&servicev1.CreateSessionRequest{SessionId: id, Profile: "second"})); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := c.AppendMessages(ctx, req(&servicev1.AppendMessagesRequest{SessionId: "a", Messages: userMessages("one", "two")})); err != nil {
		t.Fatal(err)
	}
	if _, err := c.AppendMessages(ctx, req(&servicev1.AppendMessagesRequest{SessionId: "b", Messages: userMessages("three")})); err != nil {
		t.Fatal(err)
	}
	// Session b over its window's warning line, then over the window:
	// the prepares warn and compact.
	for i := range 12 {
		text := fmt.Sprintf("step %d: %s", i, strings.Repeat(fmt.Sprintf("file%d.go line %d changed; ", i, i), 60)) // ~600 tokens
		if _, err := c.AppendMessages(ctx, req(&servicev1.AppendMessagesRequest{SessionId: "b", Messages: []*servicev1.Message{
			{Role: "user", Content: text}, {Role: "assistant", Content: "done " + fmt.Sprint(i)}}})); err != nil {
			t.Fatal(err)
		}
		if _, err := c.Prepare(ctx, req(&servicev1.PrepareRequest{SessionId: "b"})); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := c.PutMemoryBlock(ctx, req(&servicev1.PutMemoryBlockRequest{Block: &servicev1.MemoryBlock{Scope: "session:a", Label: "notes", Value: "x"}})); err != nil {
		t.Fatal(err)
	}

	res, err := http.Get(base + "/v1/feed?after=0")
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	if ct := res.Header.Get("Content-Type"); res.StatusCode != 200 || ct != "text/event-stream" {
		t.Fatalf("HTTP %d %s", res.StatusCode, ct)
	}
	sc := bufio.NewScanner(res.Body)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	var got []sseEvent
	var last uint64
	var warned, compacted, memory bool
	freedSome := false
	for !(warned && compacted && memory && freedSome) {
		evs := readSSE(t, sc, 1)
		if len(evs) == 0 {
			t.Fatalf("the stream ended after %d events: %v", len(got), got)
		}
		e := evs[0]
		got = append(got, e)
		var seq uint64
		fmt.Sscan(e.id, &seq)
		if seq <= last {
			t.Fatalf("sequence %d after %d", seq, last)
		}
		last = seq
		d, _ := e.data["data"].(map[string]any)
		switch e.event {
		case "budget:warning", "budget:critical":
			warned = e.data["session_id"] == "b" && d["utilization"].(float64) >= 0.5
		case "compacted":
			steps, _ := d["steps"].([]any)
			freed := 0.0
			for _, st := range steps {
				freed += st.(map[string]any)["freed"].(float64)
			}
			if len(steps) == 0 || d["reason"] == "" || freed != d["freed"].(float64) {
				t.Errorf("compacted: %v", d)
			}
			compacted, freedSome = true, freedSome || freed > 0
		case "memory:changed":
			memory = e.data["session_id"] == "a" && d["label"] == "notes" && d["version"].(float64) == 1
		}
	}
	var lines []string
	for _, e := range got {
		lines = append(lines, feedLine(e))
	}
	if want := "a message:added,a message:added,b message:added"; !strings.HasPrefix(strings.Join(lines, ","), want) {
		t.Errorf("the feed starts %q, want %q", lines, want)
	}
	if d := got[0].data["data"].(map[string]any); d["role"] != "user" || d["id"] == "" || got[0].data["version"].(float64) == 0 {
		t.Errorf("message:added %v", got[0].data)
	}

	// A new event while connected.
	if _, err := c.AppendMessages(ctx, req(&servicev1.AppendMessagesRequest{SessionId: "a", Messages: userMessages("live")})); err != nil {
		t.Fatal(err)
	}
	live := readSSE(t, sc, 1)
	if len(live) != 1 || feedLine(live[0]) != "a message:added" {
		t.Fatalf("the live event: %+v", live)
	}
	res.Body.Close()

	// Resumed after the event before it: that one again, nothing else.
	r2, _ := http.NewRequest("GET", base+"/v1/feed", nil)
	r2.Header.Set("Last-Event-ID", got[len(got)-1].id)
	res2, err := http.DefaultClient.Do(r2)
	if err != nil {
		t.Fatal(err)
	}
	defer res2.Body.Close()
	if again := readSSE(t, bufio.NewScanner(res2.Body), 1); len(again) != 1 || again[0].id != live[0].id {
		t.Fatalf("resumed after %s: %+v, want %s", got[len(got)-1].id, again, live[0].id)
	}

	// One session, one kind.
	res3, err := http.Get(base + "/v1/feed?session=a&kind=message:added")
	if err != nil {
		t.Fatal(err)
	}
	defer res3.Body.Close()
	if only := readSSE(t, bufio.NewScanner(res3.Body), 3); len(only) != 3 || feedLine(only[0]) != "a message:added" || only[2].id != live[0].id {
		t.Fatalf("session a's messages: %+v", only)
	}

	for q, want := range map[string]int{"after=x": 400, "from=later": 400, "session=..": 400} {
		res, err := http.Get(base + "/v1/feed?" + q)
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		if res.StatusCode != want {
			t.Errorf("GET /v1/feed?%s: HTTP %d, want %d", q, res.StatusCode, want)
		}
	}
}

// TestWatchFeedStream: the feed over the Connect server stream, resumed
// after a sequence and filtered by kind, sessions created while it waits
// arriving on it; server-sent events from the feed's end (from=now); on
// a store without a feed, FAILED_PRECONDITION (HTTP 412).
func TestWatchFeedStream(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	s := newFeedServer(t)
	c := client(t, s)
	base := serveEventsHTTP(t, s)
	if _, err := c.CreateSession(ctx, req(&servicev1.CreateSessionRequest{SessionId: "old"})); err != nil {
		t.Fatal(err)
	}
	if _, err := c.AppendMessages(ctx, req(&servicev1.AppendMessagesRequest{SessionId: "old", Messages: userMessages("before")})); err != nil {
		t.Fatal(err)
	}
	first, err := c.WatchFeed(ctx, req(&servicev1.WatchFeedRequest{Kinds: []string{"message:added"}}))
	if err != nil || !first.Receive() {
		t.Fatalf("the first event: %v", err)
	}
	head := first.Msg().Sequence
	first.Close()

	// From the feed's end over server-sent events: the answer's headers
	// come once the start is fixed.
	now, err := http.Get(base + "/v1/feed?from=now&kind=message:added")
	if err != nil {
		t.Fatal(err)
	}
	defer now.Body.Close()
	write := func(ids ...string) {
		for _, id := range ids {
			if _, err := c.CreateSession(ctx, req(&servicev1.CreateSessionRequest{SessionId: id})); err != nil {
				t.Error(err)
			}
			if _, err := c.AppendMessages(ctx, req(&servicev1.AppendMessagesRequest{SessionId: id, Messages: userMessages("after")})); err != nil {
				t.Error(err)
			}
		}
	}
	go write("new1", "new2")
	stream, err := c.WatchFeed(ctx, req(&servicev1.WatchFeedRequest{After: head, Kinds: []string{"message:added"}}))
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for len(got) < 2 && stream.Receive() {
		m := stream.Msg()
		got = append(got, m.SessionId+" "+m.Kind)
		if m.Data.GetStructValue().GetFields()["role"].GetStringValue() != "user" || m.Sequence <= head || m.Time == "" {
			t.Errorf("event %v", m)
		}
	}
	stream.Close()
	if fmt.Sprint(got) != "[new1 message:added new2 message:added]" {
		t.Errorf("events %v (%v)", got, stream.Err())
	}
	var fromNow []string
	for _, e := range readSSE(t, bufio.NewScanner(now.Body), 2) {
		fromNow = append(fromNow, feedLine(e))
	}
	if fmt.Sprint(fromNow) != "[new1 message:added new2 message:added]" {
		t.Errorf("from=now: %v", fromNow)
	}

	files := newTestServer(t, t.TempDir())
	fs, err := client(t, files).WatchFeed(ctx, req(&servicev1.WatchFeedRequest{}))
	if err == nil {
		for fs.Receive() {
		}
		err = fs.Err()
	}
	if err == nil || !strings.Contains(err.Error(), "failed_precondition") {
		t.Errorf("WatchFeed on a directory of files: %v, want failed_precondition", err)
	}
	res, err := http.Get(serveEventsHTTP(t, files) + "/v1/feed")
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != http.StatusPreconditionFailed {
		t.Errorf("GET /v1/feed on a directory of files: HTTP %d, want 412", res.StatusCode)
	}
}
