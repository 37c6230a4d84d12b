package server

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/ctxhost/ctxhost/api/servicev1"
)

// sseEvent is one server-sent event.
type sseEvent struct {
	id, event string
	data      map[string]any
}

// readSSE reads events from r until n arrived (or the stream ends).
func readSSE(t *testing.T, sc *bufio.Scanner, n int) []sseEvent {
	t.Helper()
	var out []sseEvent
	var cur sseEvent
	for len(out) < n && sc.Scan() {
		line := sc.Text()
		switch {
		case line == "":
			if cur.id != "" {
				out = append(out, cur)
			}
			cur = sseEvent{}
		case strings.HasPrefix(line, "id: "):
			cur.id = line[4:]
		case strings.HasPrefix(line, "event: "):
			cur.event = line[7:]
		case strings.HasPrefix(line, "data: "):
			if err := json.Unmarshal([]byte(line[6:]), &cur.data); err != nil {
				t.Fatalf("data %q: %v", line, err)
			}
		}
	}
	return out
}

func serveEventsHTTP(t *testing.T, s *Server) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	hs := &http.Server{Handler: s.Handler(HandlerOptions{})}
	go func() { _ = hs.Serve(ln) }()
	t.Cleanup(func() { hs.Close() })
	return "http://" + ln.Addr().String()
}

func kinds(e sseEvent) string {
	var k []string
	for _, v := range e.data["kinds"].([]any) {
		k = append(k, v.(string))
	}
	return strings.Join(k, ",")
}

// TestEventsSSE: a session's durable changes as server-sent events, each
// with its sequence as id; a new change arrives while connected; a
// reconnect with Last-Event-ID resumes after it, nothing repeated.
func TestEventsSSE(t *testing.T) {
	ctx := context.Background()
	s := newTestServer(t, t.TempDir())
	c := client(t, s)
	base := serveEventsHTTP(t, s)
	if _, err := c.CreateSession(ctx, req(&servicev1.CreateSessionRequest{SessionId: "a"})); err != nil {
		t.Fatal(err)
	}
	if _, err := c.AppendMessages(ctx, req(&servicev1.AppendMessagesRequest{SessionId: "a", Messages: userMessages("one", "two")})); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Prepare(ctx, req(&servicev1.PrepareRequest{SessionId: "a"})); err != nil {
		t.Fatal(err)
	}
	res, err := http.Get(base + "/v1/events?session=a&after=0")
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	if ct := res.Header.Get("Content-Type"); res.StatusCode != 200 || ct != "text/event-stream" {
		t.Fatalf("HTTP %d %s", res.StatusCode, ct)
	}
	sc := bufio.NewScanner(res.Body)
	got := readSSE(t, sc, 3)
	if len(got) != 3 || got[0].id != "1" || got[0].event != "snapshot" || got[1].id != "2" || kinds(got[1]) != "message_added" ||
		got[2].id != "3" || !strings.Contains(kinds(got[2]), "turn") {
		t.Fatalf("events %+v", got)
	}
	if ids := got[1].data["change"].(map[string]any)["messages_added"].([]any); len(ids) != 2 {
		t.Errorf("message ids %v", ids)
	}
	if _, err := c.AppendMessages(ctx, req(&servicev1.AppendMessagesRequest{SessionId: "a", Messages: userMessages("three")})); err != nil {
		t.Fatal(err)
	}
	next := readSSE(t, sc, 1)
	if len(next) != 1 || next[0].id != "4" || kinds(next[0]) != "message_added" {
		t.Fatalf("the live change: %+v", next)
	}
	res.Body.Close()

	r2, _ := http.NewRequest("GET", base+"/v1/events?session=a", nil)
	r2.Header.Set("Last-Event-ID", "3")
	res2, err := http.DefaultClient.Do(r2)
	if err != nil {
		t.Fatal(err)
	}
	defer res2.Body.Close()
	if again := readSSE(t, bufio.NewScanner(res2.Body), 1); len(again) != 1 || again[0].id != "4" {
		t.Fatalf("resumed after 3: %+v", again)
	}

	for q, want := range map[string]int{"": 400, "session=a&after=x": 400, "session=nobody&after=3": 404} {
		res, err := http.Get(base + "/v1/events?" + q)
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		if res.StatusCode != want {
			t.Errorf("GET /v1/events?%s: HTTP %d, want %d", q, res.StatusCode, want)
		}
	}
}

// TestWatchEventsStream: the same changes over the Connect server stream
// (and gRPC), resumed after a sequence.
func TestWatchEventsStream(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	s := newTestServer(t, t.TempDir())
	c := client(t, s)
	if _, err := c.CreateSession(ctx, req(&servicev1.CreateSessionRequest{SessionId: "w"})); err != nil {
		t.Fatal(err)
	}
	for i := range 3 {
		if _, err := c.AppendMessages(ctx, req(&servicev1.AppendMessagesRequest{SessionId: "w", Messages: userMessages(fmt.Sprint(i))})); err != nil {
			t.Fatal(err)
		}
	}
	stream, err := c.WatchEvents(ctx, req(&servicev1.WatchEventsRequest{SessionId: "w", After: 2}))
	if err != nil {
		t.Fatal(err)
	}
	var seqs []uint64
	for len(seqs) < 3 && stream.Receive() {
		m := stream.Msg()
		seqs = append(seqs, m.Sequence)
		if m.Type != "change" || strings.Join(m.Kinds, ",") != "message_added" || m.SessionId != "w" {
			t.Errorf("event %+v", m)
		}
		if len(seqs) == 2 { // a change saved while the stream waits
			if _, err := c.AppendMessages(ctx, req(&servicev1.AppendMessagesRequest{SessionId: "w", Messages: userMessages("late")})); err != nil {
				t.Fatal(err)
			}
		}
	}
	stream.Close()
	if fmt.Sprint(seqs) != "[3 4 5]" {
		t.Errorf("sequences %v, want [3 4 5] (%v)", seqs, stream.Err())
	}
}
