package inspector

import (
	"bufio"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"
)

// streamed is one server-sent event: its id, type and data.
type streamed struct {
	id, kind string
	ev       Event
}

// openEvents opens the event stream at path with Last-Event-ID lastID
// ("": none) and returns its events as they come.
func openEvents(t *testing.T, url, lastID string) <-chan streamed {
	t.Helper()
	req, _ := http.NewRequest(http.MethodGet, url, nil)
	req.Header.Set("Authorization", "Bearer tok")
	if lastID != "" {
		req.Header.Set("Last-Event-ID", lastID)
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { res.Body.Close() })
	out := make(chan streamed, 100)
	sc := bufio.NewScanner(res.Body)
	sc.Scan() // the opening comment: the subscription is in place
	go func() {
		var cur streamed
		for sc.Scan() {
			line := sc.Text()
			switch {
			case strings.HasPrefix(line, "id: "):
				cur.id = line[4:]
			case strings.HasPrefix(line, "event: "):
				cur.kind = line[7:]
			case strings.HasPrefix(line, "data: "):
				_ = json.Unmarshal([]byte(line[6:]), &cur.ev)
			case line == "" && cur.kind != "":
				out <- cur
				cur = streamed{}
			}
		}
	}()
	return out
}

func next(t *testing.T, ch <-chan streamed) streamed {
	t.Helper()
	select {
	case s := <-ch:
		return s
	case <-time.After(time.Minute):
		t.Fatal("no event")
	}
	return streamed{}
}

// TestEventsResume: each event's id is its turn's number among those
// recorded; a stream opened with Last-Event-ID (an EventSource
// reconnecting) first sends what was recorded after it, of its session,
// then the new turns, none lost or twice; one whose id is past what is
// held, or ahead of the server, starts with a reset.
func TestEventsResume(t *testing.T) {
	rec, srv := newTestServer(t, "tok")
	live := openEvents(t, srv.URL+"/ui/api/events?session=live", "")
	rec.Record(Call{Session: "live"}, prepared("{}", false))
	first := next(t, live)
	if first.kind != "turn" || first.id != "1" || first.ev.Seq != 1 || first.ev.Turn.N != 1 {
		t.Fatalf("first event %+v", first)
	}
	// Disconnected after turn 1: turns 2 and 3 of live and one of another
	// session are recorded meanwhile.
	rec.Record(Call{Session: "live"}, prepared("{}", false))
	rec.Record(Call{Session: "other"}, prepared("{}", false))
	rec.Record(Call{Session: "live"}, prepared("{}", false))
	again := openEvents(t, srv.URL+"/ui/api/events?session=live", first.id)
	for _, want := range []struct {
		id string
		n  int
	}{{"2", 2}, {"4", 3}} {
		if got := next(t, again); got.kind != "turn" || got.id != want.id || got.ev.Turn.N != want.n || got.ev.Session != "live" {
			t.Errorf("resumed event %+v, want id %s turn %d", got, want.id, want.n)
		}
	}
	rec.Record(Call{Session: "live"}, prepared("{}", false))
	if got := next(t, again); got.id != "5" || got.ev.Turn.N != 4 {
		t.Errorf("the next live event %+v, want id 5 turn 4", got)
	}
	select {
	case s := <-again:
		t.Errorf("an event more: %+v", s)
	case <-time.After(200 * time.Millisecond):
	}
	// A stream of a server since restarted: its id is ahead.
	ahead := openEvents(t, srv.URL+"/ui/api/events", "99")
	if got := next(t, ahead); got.kind != "reset" || got.id != "5" {
		t.Errorf("resumed from ahead of the server: %+v, want a reset at 5", got)
	}
	// Turns past the log.
	for range LogSize + 1 {
		rec.Record(Call{Session: "busy"}, prepared("{}", false))
	}
	old := openEvents(t, srv.URL+"/ui/api/events?session=live", "5")
	if got := next(t, old); got.kind != "reset" || got.id != "4102" {
		t.Errorf("resumed past the log: %+v, want a reset at 4102", got)
	}
	if evs, latest, all := rec.Since(latestMinus(rec, 2)); len(evs) != 2 || latest != 4102 || !all {
		t.Errorf("Since two before the latest: %d events, latest %d, all %v", len(evs), latest, all)
	}
	if _, _, all := rec.Since(0); all {
		t.Error("Since(0) after more than LogSize turns: all held")
	}
}

func latestMinus(r *Recorder, n uint64) uint64 { return r.Seq() - n }
