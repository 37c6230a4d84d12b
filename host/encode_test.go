package host_test

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"strings"
	"testing"

	"github.com/ctxhost/ctxhost/host"
	"github.com/ctxhost/ctxhost/sdk"
)

// markup is a text JSON would escape most: <, > and & (six bytes each
// as json.Marshal writes them).
func markup(n int) string { return strings.Repeat("<p>a&b</p>", n/10) }

// spyRecorders counts the events its recorders were given to encode and
// the saves that asked for a snapshot instead.
type spyRecorders struct {
	host.Recorders
	encoded, skipped int
}

func (s *spyRecorders) Create(ctx context.Context, id string) (host.Recorder, error) {
	r, err := s.Recorders.Create(ctx, id)
	return &spyRecorder{r, s}, err
}

type spyRecorder struct {
	host.Recorder
	s *spyRecorders
}

func (r *spyRecorder) Save(ctx context.Context, event func() ([]byte, error), state func(context.Context) ([]byte, error)) error {
	return r.Recorder.Save(ctx, func() ([]byte, error) {
		ev, err := event()
		if ev == nil {
			r.s.skipped++
		} else {
			r.s.encoded++
		}
		return ev, err
	}, state)
}

// TestStoredTextsCostTheirLength: a 1 MB answer of markup is saved as a
// snapshot of about its length (no HTML escaping, the history not in
// base64: it was 4.9 MB), without being encoded as an event first (it
// could not be appended), and reads back whole.
func TestStoredTextsCostTheirLength(t *testing.T) {
	store := newMemStore()
	spy := &spyRecorders{Recorders: host.Journals(store, 0)}
	h := host.New(host.Options{Recorders: spy})
	s, err := h.NewSession("s1", newStoreRig(t, h).cfg)
	must(t, err)
	_, err = s.Conversation().AddMessage(sdk.Message{Role: sdk.RoleUser, Content: "write the page"})
	must(t, err)
	encoded := spy.encoded
	text := markup(1 << 20)
	_, err = s.Conversation().AddMessage(sdk.Message{Role: sdk.RoleAssistant, Content: text})
	must(t, err)
	if spy.encoded != encoded || spy.skipped != 1 {
		t.Errorf("the 1 MB answer: %d events encoded, %d saves asked for a snapshot; want 0 and 1", spy.encoded-encoded, spy.skipped)
	}
	snap := store.data["s1"].Snapshot
	if limit := len(text) + 16<<10; len(snap) > limit {
		t.Errorf("the snapshot of a %d-byte answer is %d bytes, over %d", len(text), len(snap), limit)
	}
	t.Logf("%d bytes of markup: a snapshot of %d bytes", len(text), len(snap))
	got := reopenStored(t, store, "s1").Conversation().History()
	if len(got) != 2 || got[1].Content != text {
		t.Fatalf("read back: %d messages, the answer whole: %v", len(got), len(got) == 2 && got[1].Content == text)
	}
}

// TestVersion1StateRead: a state as version 1 wrote it (the history's
// JSON in base64) restores the same session.
func TestVersion1StateRead(t *testing.T) {
	ctx := context.Background()
	h := host.New(host.Options{})
	src, err := h.NewSession("src", newStoreRig(t, h).cfg)
	must(t, err)
	for _, text := range []string{"first <b>question</b>", "an answer & more"} {
		_, err := src.Conversation().AddMessage(sdk.Message{Role: sdk.RoleUser, Content: text})
		must(t, err)
	}
	state, err := src.Durability().Export(ctx)
	must(t, err)
	var st map[string]json.RawMessage
	must(t, json.Unmarshal(state, &st))
	if st["history"][0] != '{' {
		t.Fatalf("history exported as %.20s, want its JSON object", st["history"])
	}
	old, _ := json.Marshal(base64.StdEncoding.EncodeToString(st["history"]))
	st["history"], st["version"] = old, json.RawMessage("1")
	v1, _ := json.Marshal(st)
	dst, err := h.NewSession("dst", newStoreRig(t, h).cfg)
	must(t, err)
	must(t, dst.Durability().Restore(ctx, v1))
	if got, want := dst.Conversation().History(), src.Conversation().History(); len(got) != 2 || got[0].Content != want[0].Content || got[1].Content != want[1].Content {
		t.Errorf("version 1 state restored %+v, want %+v", got, want)
	}
	st["version"] = json.RawMessage("2")
	v2base64, _ := json.Marshal(st)
	if err := dst.Durability().Restore(ctx, v2base64); err == nil {
		t.Error("a version 2 state with a base64 history was restored")
	}
}
