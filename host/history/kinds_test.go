package history

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/ctxhost/ctxhost/sdk"
)

func kinded(role, kind, content string) sdk.Message {
	return sdk.Message{Role: role, Kind: kind, Content: content}
}

func viewIDs(h *History) []string {
	var ids []string
	for _, m := range h.View() {
		ids = append(ids, m.ID)
	}
	return ids
}

// Observations sent as user messages are masked like tool outputs; the
// task (the first user message) is never masked.
func TestUserObservationsAreMasked(t *testing.T) {
	h := New(approx(t), Options{PreserveRecent: 1})
	mustAdd(t, h, user(big()),
		kinded(sdk.RoleAssistant, sdk.KindAction, "ls"), kinded(sdk.RoleUser, sdk.KindObservation, big()),
		kinded(sdk.RoleAssistant, sdk.KindAction, "cat"), kinded(sdk.RoleUser, sdk.KindObservation, big()))
	res := h.MaskOldest(5)
	if !cmp.Equal(res.IDs, []string{"m3"}) { // m5 is preserved
		t.Fatalf("masked %v, want [m3]", res.IDs)
	}
	if v := h.View(); !strings.Contains(v[2].Content, "output masked") || !strings.Contains(v[2].Content, "id=m3") || v[0].Content != big() {
		t.Errorf("view %+v", v[:3])
	}
	if got, _ := h.Get("m3"); got.Content != big() {
		t.Errorf("Get(m3) lost the original")
	}
	checkConsistent(t, h)
}

// Demonstrations go first, as one block, before any observation is
// masked; the task after them is kept.
func TestDemonstrationsGoFirst(t *testing.T) {
	h := New(approx(t), Options{PreserveRecent: 1}) // one turn: m6 and the observation answering it
	mustAdd(t, h, kinded(sdk.RoleUser, sdk.KindDemonstration, big()), kinded(sdk.RoleUser, sdk.KindDemonstration, big()),
		user("the task"),
		kinded(sdk.RoleAssistant, "", "ls"), kinded(sdk.RoleUser, sdk.KindObservation, big()),
		kinded(sdk.RoleAssistant, "", "cat"), kinded(sdk.RoleUser, sdk.KindObservation, big()))
	if k := h.Kind("m3"); k != sdk.KindTask {
		t.Fatalf("kind of m3 = %q, want task (the first user message after the demonstrations)", k)
	}
	step := h.Compact(1)
	if step.Dropped != 2 || step.Masked != 0 {
		t.Fatalf("Compact(1) = %+v, want the demonstration block dropped first", step)
	}
	if diff := cmp.Diff([]string{"m3", "", "m4", "m5", "m6", "m7"}, viewIDs(h)); diff != "" {
		t.Errorf("view (-want +got):\n%s", diff)
	}
	if res := h.MaskOldest(1); res.Masked != 1 || res.IDs[0] != "m5" {
		t.Errorf("then MaskOldest masks the oldest observation: %+v", res)
	}
	checkConsistent(t, h)
}

// The window never omits the task or a pinned message, wherever they
// stand; pinned messages inside the omitted span stay shown before the
// marker, so that omitting more later changes nothing before it.
func TestWindowKeepsTaskAndPinned(t *testing.T) {
	h := New(approx(t), Options{PreserveRecent: 1})
	pinned := user(big())
	pinned.Pinned = true
	mustAdd(t, h, kinded(sdk.RoleSystem, "", big()), user("task"), user(big()), pinned, user(big()), user("end"))
	h.Compact(1 << 20)
	if diff := cmp.Diff([]string{"m2", "m4", "", "m6"}, viewIDs(h)); diff != "" {
		t.Errorf("view (-want +got):\n%s", diff)
	}
	if h.View()[2].Content != OmittedMarker(3) {
		t.Errorf("marker %q, want it to count the 3 omitted messages", h.View()[2].Content)
	}
	checkConsistent(t, h)
}

// An oversized message that must stay is cut head + tail with a marker
// naming its id; Get returns the full text, and the cut survives State.
func TestOversizedMessageIsCut(t *testing.T) {
	h := New(approx(t), Options{PreserveRecent: 1})
	long := "HEAD " + strings.Repeat("middle words here ", 400) + " TAIL"
	mustAdd(t, h, user(long), user("go"))
	before := h.ViewTokens()
	if step := h.Compact(before / 2); step.Freed != 0 {
		t.Fatalf("Compact cut or omitted the task: %+v", step)
	}
	step := h.Cut(before / 2)
	if !cmp.Equal(step.CutIDs, []string{"m1"}) || step.Freed < before/2 {
		t.Fatalf("Compact = %+v (before %d)", step, before)
	}
	v := h.View()[0].Content
	if !strings.HasPrefix(v, "HEAD ") || !strings.HasSuffix(v, " TAIL") || !strings.Contains(v, "cut from message m1; the full text is retrievable by id m1") {
		t.Errorf("cut view %q", v)
	}
	if got, _ := h.Get("m1"); got.Content != long {
		t.Error("Get(m1) lost the full text")
	}
	checkConsistent(t, h)
	data, err := h.State()
	if err != nil {
		t.Fatal(err)
	}
	r := New(approx(t), Options{PreserveRecent: 1})
	if err := r.Restore(data); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(h.View(), r.View()); diff != "" || r.ViewTokens() != h.ViewTokens() {
		t.Errorf("restored view (-orig +restored):\n%s", diff)
	}
}

func TestPolicyCheck(t *testing.T) {
	for _, tc := range []struct {
		p    Policy
		want string
	}{
		{Policy{"rumour": {Mask: true}}, `unknown message kind "rumour"`},
		{Policy{sdk.KindTask: {Pin: true, Mask: true}}, "cannot also be masked"},
		{Policy{sdk.KindChat: {Mask: true}}, ""},
	} {
		err := tc.p.Check()
		if (tc.want == "") != (err == nil) || err != nil && !strings.Contains(err.Error(), tc.want) {
			t.Errorf("Check(%v) = %v, want %q", tc.p, err, tc.want)
		}
	}
}

// A framing counts content, name and tool calls plus the overheads.
func TestFramedCounting(t *testing.T) {
	f := sdk.Framing{PerMessage: 4, PerToolCall: 3, PerName: 1}
	h := New(approx(t), Options{Framing: &f})
	m := mustAdd(t, h, sdk.Message{Role: sdk.RoleAssistant, Content: "abcdefgh", Name: "bob", ToolCalls: []sdk.ToolCall{{ID: "c", Name: "ls", Arguments: "{}"}}})[0]
	c := approx(t)
	want := 4 + c.Count("abcdefgh") + 1 + c.Count("bob") + 3 + c.Count("ls") + c.Count("{}")
	if got := h.ViewTokens(); got != want {
		t.Errorf("framed tokens %d, want %d (%+v)", got, want, m)
	}
}

// A message cut once can be cut shorter when the context grows again.
func TestCutMessageCanBeCutAgain(t *testing.T) {
	h := New(approx(t), Options{PreserveRecent: 2})
	long := "HEAD " + strings.Repeat("middle words here ", 800) + " TAIL"
	mustAdd(t, h, user(long))
	first := h.Cut(h.ViewTokens() / 3)
	after := h.ViewTokens()
	second := h.Cut(after / 2)
	if len(first.CutIDs) != 1 || len(second.CutIDs) != 1 || second.Freed < after/2 {
		t.Fatalf("first %+v, second %+v", first, second)
	}
	if v := h.View()[0].Content; !strings.HasPrefix(v, "HEAD ") || !strings.HasSuffix(v, " TAIL") || strings.Count(v, "tokens cut from message m1") != 1 {
		t.Errorf("cut again from the original: %q", v)
	}
	checkConsistent(t, h)
}

// CompactLate drops the demonstrations before it masks anything.
func TestCompactLateDropsDemonstrationsFirst(t *testing.T) {
	h := New(approx(t), Options{PreserveRecent: 1})
	mustAdd(t, h, kinded(sdk.RoleUser, sdk.KindDemonstration, big()), user("the task"),
		kinded(sdk.RoleAssistant, "", "ls"), kinded(sdk.RoleUser, sdk.KindObservation, big()),
		kinded(sdk.RoleAssistant, "", "cat"), kinded(sdk.RoleUser, sdk.KindObservation, big()))
	step := h.CompactLate(1)
	if step.Dropped != 1 || step.Masked != 0 || !strings.Contains(step.Log, "omitted 1 demonstration messages (m1)") {
		t.Errorf("CompactLate(1) = %+v, want the demonstration dropped first and nothing masked", step)
	}
	checkConsistent(t, h)
}
