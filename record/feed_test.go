package record_test

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/ctxhost/ctxhost/record"
)

// feedMem is a memStore that keeps a feed: the events each write carried.
type feedMem struct {
	memStore
	feed []record.FeedEvent
}

func (m *feedMem) AppendNoted(ctx context.Context, id string, expected uint64, event []byte, evs []record.FeedEvent) error {
	if err := m.Append(ctx, id, expected, event); err != nil {
		return err
	}
	return m.note(expected+1, evs)
}

func (m *feedMem) SnapshotNoted(ctx context.Context, id string, expected uint64, state []byte, evs []record.FeedEvent) error {
	if err := m.Snapshot(ctx, id, expected, state); err != nil {
		return err
	}
	return m.note(expected+1, evs)
}

func (m *feedMem) note(v uint64, evs []record.FeedEvent) error {
	for _, ev := range evs {
		ev.Version, ev.Sequence = v, uint64(len(m.feed)+1)
		m.feed = append(m.feed, ev)
	}
	return nil
}

func (m *feedMem) Publish(_ context.Context, evs []record.FeedEvent) error { return m.note(0, evs) }

func (m *feedMem) ReadFeed(_ context.Context, after uint64, limit int) ([]record.FeedEvent, error) {
	if after >= uint64(len(m.feed)) {
		return nil, nil
	}
	return m.feed[after:min(uint64(len(m.feed)), after+uint64(limit))], nil
}

func (m *feedMem) FeedHead(context.Context) (uint64, error) { return uint64(len(m.feed)), nil }

// TestJournalNotesGoWithTheSave: events noted are written with the next
// save (append or snapshot) at its version; a failed save keeps them for
// the next one; a store without a feed drops them.
func TestJournalNotesGoWithTheSave(t *testing.T) {
	ctx := context.Background()
	st := &feedMem{}
	j := record.NewJournal(st, "s", 10)
	event := func() ([]byte, error) { return []byte("eeee"), nil }
	state := func(context.Context) ([]byte, error) { return []byte("ss"), nil }
	j.Note("a", []byte("1"))
	if err := j.Save(ctx, event, state); err != nil { // a snapshot
		t.Fatal(err)
	}
	if err := j.Save(ctx, event, state); err != nil { // nothing noted
		t.Fatal(err)
	}
	j.Note("b", []byte("2"))
	j.Note("c", []byte("3"))
	st.failNext = true
	if err := j.Save(ctx, event, state); !errors.Is(err, record.ErrNotPersisted) {
		t.Fatalf("failed save: %v", err)
	}
	if j.Noted() != 2 {
		t.Fatalf("after a failed save %d events wait, want 2", j.Noted())
	}
	if err := j.Save(ctx, event, state); err != nil { // a snapshot (stale)
		t.Fatal(err)
	}
	var got []string
	for _, ev := range st.feed {
		got = append(got, fmt.Sprintf("%s@%d:%s=%s", ev.Session, ev.Version, ev.Kind, ev.Data))
	}
	if want := "[s@1:a=1 s@3:b=2 s@3:c=3]"; fmt.Sprint(got) != want {
		t.Errorf("feed %v, want %s", got, want)
	}
	if j.Noted() != 0 {
		t.Errorf("%d events still wait after the save", j.Noted())
	}

	plain := record.NewJournal(&memStore{}, "p", 10)
	plain.Note("a", nil)
	if plain.Noted() != 0 {
		t.Errorf("a store without a feed keeps %d noted events", plain.Noted())
	}
}
