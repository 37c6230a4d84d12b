package sqlite_test

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ctxhost/ctxhost/record"
	"github.com/ctxhost/ctxhost/store/sqlite"
)

// BenchmarkFirstSaveNoted is a session's first save as a 1,000-message
// conversation's first call makes it: a snapshot of about 350 KB with one
// message_added event per message, a new session each iteration. Count
// its instructions with callgrind to compare two versions of the store.
func BenchmarkFirstSaveNoted(b *testing.B) {
	s, err := sqlite.New(filepath.Join(b.TempDir(), "s.db"))
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	ctx := context.Background()
	state := []byte(strings.Repeat("x", 350<<10))
	events := make([]record.FeedEvent, 1000)
	for i := range events {
		events[i] = record.FeedEvent{Kind: "message_added", Data: []byte(fmt.Sprintf(`{"id":"m%d","role":"tool","tokens":250}`, i))}
	}
	i := 0
	for b.Loop() {
		i++
		if err := s.SnapshotNoted(ctx, fmt.Sprintf("s%d", i), 0, state, events); err != nil {
			b.Fatal(err)
		}
	}
}
