package host_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/ctxhost/ctxhost/host"
	"github.com/ctxhost/ctxhost/host/plaintext"
	"github.com/ctxhost/ctxhost/sdk"
	"github.com/ctxhost/ctxhost/store/filestore"
	"github.com/ctxhost/ctxhost/tokenizer"
)

// BenchmarkStorePerTurn measures one turn of calls that each save the
// session to a file store (a user message, a plugin op that grows the
// plugin's state, an assistant message, a usage report: four fsynced
// saves) on two sessions, one 100 turns long and one 5,000 turns long
// (about 7 MB of history and plugin state), turns alternating between
// them so both see the same machine. It reports each one's time per turn
// and their ratio (5,000 / 100): with an append-only log it stays near 1.
//
//	go test -run '^$' -bench StorePerTurn -benchtime 300x ./host/
func BenchmarkStorePerTurn(b *testing.B) {
	ctx := context.Background()
	lengths := []int{100, 5000}
	sessions := make([]*host.Session, len(lengths))
	for i, turns := range lengths {
		fs, err := filestore.New(b.TempDir())
		if err != nil {
			b.Fatal(err)
		}
		h := host.New(host.Options{Recorders: host.Journals(fs, 0)})
		cfg := host.Config{
			Window: 1 << 30, Encoding: tokenizer.Approximate,
			Plugins:   []host.PluginBinding{{Name: "notes", Plugin: sdk.NewLocalPlugin(notesPlugin{name: "notes"})}},
			Assembler: plaintext.New(), Format: "text",
		}
		s, err := h.NewSession("bench", cfg)
		if err != nil {
			b.Fatal(err)
		}
		for t := range turns {
			storeTurn(b, ctx, s, t)
		}
		sessions[i] = s
	}
	spent := make([]time.Duration, len(lengths))
	b.ResetTimer()
	for n := range b.N {
		for i, s := range sessions {
			start := time.Now()
			storeTurn(b, ctx, s, lengths[i]+n)
			spent[i] += time.Since(start)
		}
	}
	per := func(i int) float64 { return float64(spent[i].Nanoseconds()) / float64(b.N) }
	b.ReportMetric(per(0), "ns/turn@100")
	b.ReportMetric(per(1), "ns/turn@5000")
	b.ReportMetric(per(1)/per(0), "ratio")
}

var benchText = strings.Repeat("the parser drops the last token of a line ", 10)

func storeTurn(b *testing.B, ctx context.Context, s *host.Session, i int) {
	if _, err := s.Conversation().AddMessage(sdk.Message{Role: sdk.RoleUser, Content: fmt.Sprint(i, benchText)}); err != nil {
		b.Fatal(err)
	}
	if err := addNote(ctx, s, "notes", fmt.Sprint("note ", i, benchText)); err != nil {
		b.Fatal(err)
	}
	if _, err := s.Conversation().AddMessage(sdk.Message{Role: sdk.RoleAssistant, Content: fmt.Sprint("answer ", i, benchText)}); err != nil {
		b.Fatal(err)
	}
	if err := s.Planning().ReportUsage(100+i, 10); err != nil {
		b.Fatal(err)
	}
}
