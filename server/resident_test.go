package server

import (
	"context"
	"fmt"
	"slices"
	"testing"

	dto "github.com/prometheus/client_model/go"

	"github.com/ctxhost/ctxhost/api/servicev1"
)

// TestIdleSessionsUnloadedOverMemoryLimit drives the trimmer with a heap
// reading it is given: over half the limit, the sessions idle longest
// are unloaded in proportion (never one a call holds), once per
// collection; an unloaded session is read back from the store whole.
func TestIdleSessionsUnloadedOverMemoryLimit(t *testing.T) {
	ctx := context.Background()
	s := newTestServer(t, t.TempDir())
	c := client(t, s)
	payloads := map[string]string{}
	for i := range 10 {
		id := fmt.Sprintf("s%d", i)
		if _, err := c.CreateSession(ctx, req(&servicev1.CreateSessionRequest{SessionId: id})); err != nil {
			t.Fatal(err)
		}
		if _, err := c.AppendMessages(ctx, req(&servicev1.AppendMessagesRequest{SessionId: id,
			Messages: []*servicev1.Message{{Role: "user", Content: "task of " + id}, {Role: "assistant", Content: "working on " + id}}})); err != nil {
			t.Fatal(err)
		}
		p, err := c.Prepare(ctx, req(&servicev1.PrepareRequest{SessionId: id}))
		if err != nil {
			t.Fatal(err)
		}
		payloads[id] = p.Msg.Payload
	}
	if _, err := c.GetSession(ctx, req(&servicev1.GetSessionRequest{SessionId: "s2"})); err != nil { // s2 used last
		t.Fatal(err)
	}
	unlock, err := s.lock(ctx, "s0") // s0 busy: never unloaded under a call
	if err != nil {
		t.Fatal(err)
	}

	live, cycles := uint64(0), uint64(1)
	s.res.limit, s.res.heap = 100, func() (uint64, uint64) { return live, cycles }
	live = 50 // at half the limit: nothing to do
	s.trim()
	if got := s.openIDs(); len(got) != 10 {
		t.Fatalf("at half the limit %d sessions held, want 10: %v", len(got), got)
	}
	live, cycles = 90, 2 // 6 of 10 to go, to come to 40% of the limit
	s.trim()
	want := []string{"s2", "s7", "s8", "s9", "s0"}
	if got := s.openIDs(); !sameSet(got, want) {
		t.Fatalf("held after the trim: %v, want %v (the least recently used unloaded, s0 held by a call)", got, want)
	}
	var m dto.Metric
	if err := s.metrics.unloaded.Write(&m); err != nil || m.GetCounter().GetValue() != 5 {
		n := m.GetCounter().GetValue()
		t.Errorf("ctxhost_sessions_unloaded_total = %v, want 5", n)
	}
	unlock()
	s.trim() // no collection since: the reading is the same heap
	if got := s.openIDs(); len(got) != 5 {
		t.Fatalf("a second trim within one collection unloaded more: %v", got)
	}

	for id, before := range payloads {
		p, err := c.Prepare(ctx, req(&servicev1.PrepareRequest{SessionId: id}))
		if err != nil {
			t.Fatalf("prepare %s after the trim: %v", id, err)
		}
		if p.Msg.Payload != before {
			t.Errorf("%s: the payload read back from the store differs:\n%s\nwant\n%s", id, p.Msg.Payload, before)
		}
	}
	if got := s.openIDs(); len(got) != 10 {
		t.Errorf("after calling every session %d are held, want 10", len(got))
	}
}

func (s *Server) openIDs() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	var ids []string
	for id := range s.open {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	return ids
}

func sameSet(a, b []string) bool {
	a, b = slices.Clone(a), slices.Clone(b)
	slices.Sort(a)
	slices.Sort(b)
	return slices.Equal(a, b)
}
