package history

import (
	"strings"
	"testing"

	"github.com/ctxhost/ctxhost/sdk"
	"github.com/ctxhost/ctxhost/tokenizer"
)

func kindsOf(t *testing.T, h *History) []string {
	t.Helper()
	var out []string
	for _, e := range h.Entries(0, h.Len()) {
		out = append(out, e.Kind)
	}
	return out
}

func addAll(t *testing.T, h *History, msgs ...sdk.Message) {
	t.Helper()
	for _, m := range msgs {
		if _, err := h.Add(m); err != nil {
			t.Fatal(err)
		}
	}
}

// TestInferOpening: the last user message before the first assistant
// message is the task; earlier ones are instructions (chat) or
// demonstrations (agent loop); a labelled task is never overridden.
func TestInferOpening(t *testing.T) {
	c, _ := tokenizer.Get(tokenizer.Approximate)
	user := func(s string) sdk.Message { return sdk.Message{Role: sdk.RoleUser, Content: s} }
	asst := sdk.Message{Role: sdk.RoleAssistant, Content: "on it"}
	cases := []struct {
		infer string
		msgs  []sdk.Message
		want  string
	}{
		{InferOff, []sdk.Message{user("demo"), user("task"), asst, user("out")}, "task chat chat chat"},
		{InferChat, []sdk.Message{user("demo"), user("task"), asst, user("out")}, "instruction task chat chat"},
		{InferAgent, []sdk.Message{user("demo"), user("task"), asst, user("out")}, "demonstration task action observation"},
		{InferAgent, []sdk.Message{user("a"), user("b"), user("task"), asst, user("out"), user("more")}, "demonstration demonstration task action observation chat"},
		{InferAgent, []sdk.Message{{Role: sdk.RoleUser, Content: "t", Kind: sdk.KindTask}, user("x"), asst}, "task chat action"},
	}
	for _, tc := range cases {
		h := New(c, Options{Infer: tc.infer})
		addAll(t, h, tc.msgs...)
		if got := strings.Join(kindsOf(t, h), " "); got != tc.want {
			t.Errorf("%s: kinds %q, want %q", tc.infer, got, tc.want)
		}
		// A restored history infers the same kinds.
		st, err := h.State()
		if err != nil {
			t.Fatal(err)
		}
		r := New(c, Options{Infer: tc.infer})
		if err := r.Restore(st); err != nil {
			t.Fatal(err)
		}
		if got := strings.Join(kindsOf(t, r), " "); got != tc.want {
			t.Errorf("%s restored: kinds %q, want %q", tc.infer, got, tc.want)
		}
	}
}

// TestStripMediaAndThinking: under pressure the images and documents of
// older messages become placeholders naming their id and the thinking of
// earlier assistant turns goes, before any text is masked or omitted;
// the last assistant turn keeps its thinking; the originals stay
// retrievable and a restored history shows the same view.
func TestStripMediaAndThinking(t *testing.T) {
	c, _ := tokenizer.Get(tokenizer.CL100kBase)
	h := New(c, Options{PreserveRecent: 2, Framing: &sdk.Framing{PerMessage: 4, Media: sdk.MediaAnthropic}})
	img := sdk.Part{Type: sdk.PartImage, MediaType: "image/png", Data: []byte{1, 2, 3}, Width: 1000, Height: 1000}
	think := sdk.Part{Type: sdk.PartThinking, Text: strings.Repeat("pondering ", 50), Signature: "sig"}
	addAll(t, h,
		sdk.Message{Role: sdk.RoleUser, Kind: sdk.KindChat, Parts: []sdk.Part{{Type: sdk.PartText, Text: "look"}, img}},
		sdk.Message{Role: sdk.RoleAssistant, Parts: []sdk.Part{think, {Type: sdk.PartText, Text: "seen"}}},
		sdk.Message{Role: sdk.RoleUser, Content: "and now?"},
		sdk.Message{Role: sdk.RoleAssistant, Parts: []sdk.Part{think, {Type: sdk.PartText, Text: "done"}}},
		sdk.Message{Role: sdk.RoleUser, Content: "thanks"},
	)
	before := h.ViewTokens()
	if before < 1333 {
		t.Fatalf("view %d tokens: the 1000x1000 image should count about 1,333", before)
	}
	step := h.Compact(1)
	if len(step.StrippedIDs) != 1 || step.StrippedIDs[0] != "m1" || step.Masked+step.Omitted+step.Dropped != 0 {
		t.Fatalf("first step %+v: want m1 stripped, nothing else", step)
	}
	step = h.Compact(1)
	if len(step.StrippedIDs) != 1 || step.StrippedIDs[0] != "m2" {
		t.Fatalf("second step %+v: want m2's thinking left out before anything else", step)
	}
	view := h.View()
	if p := view[0].Parts; len(p) != 2 || p[1].Type != sdk.PartText || !strings.Contains(p[1].Text, "retrievable by id m1") {
		t.Errorf("m1 in the view: %+v", p)
	}
	for _, m := range view {
		for _, p := range m.Parts {
			if p.Type == sdk.PartThinking && m.ID != "m4" {
				t.Errorf("%s still shows its thinking", m.ID)
			}
		}
	}
	if orig, _ := h.Get("m1"); len(orig.Parts) != 2 || orig.Parts[1].Type != sdk.PartImage {
		t.Errorf("the original of m1 is lost: %+v", orig.Parts)
	}
	st, err := h.State()
	if err != nil {
		t.Fatal(err)
	}
	r := New(c, h.Options())
	if err := r.Restore(st); err != nil {
		t.Fatal(err)
	}
	if r.ViewTokens() != h.ViewTokens() || len(r.View()) != len(view) {
		t.Errorf("restored view %d tokens, live %d", r.ViewTokens(), h.ViewTokens())
	}
}
