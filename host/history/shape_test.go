package history

import (
	"fmt"
	"sort"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/ctxhost/ctxhost/sdk"
)

// unlabelled returns msgs without their kinds, as an agent sends them.
func unlabelled(msgs []sdk.Message) []sdk.Message {
	out := make([]sdk.Message, len(msgs))
	for i, m := range msgs {
		m.Kind = ""
		out[i] = m
	}
	return out
}

// shapesWhileAdding adds msgs one by one and returns the shape after each.
func shapesWhileAdding(t *testing.T, h *History, msgs []sdk.Message) []string {
	t.Helper()
	var shapes []string
	for _, m := range msgs {
		mustAdd(t, h, m)
		s, why := h.Shape()
		if why == "" {
			t.Fatalf("shape %q without a reason", s)
		}
		shapes = append(shapes, s)
	}
	return shapes
}

// changes counts the changes of decision in a sequence of shapes.
func changes(shapes []string) int {
	n := 0
	for i := 1; i < len(shapes); i++ {
		if shapes[i] != shapes[i-1] {
			n++
		}
	}
	return n
}

// maskedIDs compacts h turn by turn at budget, as a session does, and
// returns the ids masked in the end, sorted.
func compactedAt(t *testing.T, h *History, msgs []sdk.Message, budget int) []string {
	t.Helper()
	for _, m := range msgs {
		mustAdd(t, h, m)
		if over := h.ViewTokens() - budget; over > 0 {
			h.Compact(over)
			checkConsistent(t, h)
		}
	}
	var ids []string
	for _, e := range h.Entries(0, h.Len()) {
		if e.Shown == ShownMasked {
			ids = append(ids, e.Message.ID)
		}
	}
	sort.Strings(ids)
	return ids
}

// TestAutoShapeOnTrajectories: sent unlabelled, SWE-agent's runs are read
// as they are: the function-calling ones as a tool-using agent (the tool
// results are the observations), the one whose observations come back as
// user messages after each action as an agent loop, whose observations
// are then masked as those of the labelled run are. The decision changes
// at most once (from the chat it starts as) and never flips back.
func TestAutoShapeOnTrajectories(t *testing.T) {
	counter := cl100k(t)
	for name, msgs := range loadTrajectories(t) {
		t.Run(name, func(t *testing.T) {
			want := ShapeTools
			if strings.Contains(name, "xml") {
				want = ShapeAgent
			}
			h := New(counter, Options{Infer: InferAuto})
			shapes := shapesWhileAdding(t, h, unlabelled(msgs))
			if got := shapes[len(shapes)-1]; got != want {
				_, why := h.Shape()
				t.Fatalf("shape %q (%s), want %q", got, why, want)
			}
			if n := changes(shapes); n > 1 {
				t.Errorf("the decision changed %d times: %v", n, shapes)
			}
			labelled := New(counter, Options{})
			mustAdd(t, labelled, msgs...)
			for i, e := range h.Entries(0, h.Len()) {
				wantKind := labelled.Kind(e.Message.ID)
				if msgs[i].Kind == "" { // the transcript left it to the role
					wantKind = sdk.DefaultKind(msgs[i])
				}
				if e.Kind != wantKind && !(wantKind == sdk.KindChat && e.Kind == sdk.KindAction) {
					t.Errorf("%s (%s): kind %q, labelled %q", e.Message.ID, e.Message.Role, e.Kind, wantKind)
				}
			}
			for _, budget := range []int{4000, 8000} {
				auto := compactedAt(t, New(counter, Options{Infer: InferAuto, PreserveRecent: 2}), unlabelled(msgs), budget)
				lab := compactedAt(t, New(counter, Options{PreserveRecent: 2}), msgs, budget)
				if !cmp.Equal(auto, lab) {
					t.Errorf("budget %d: masked %v unlabelled under auto, %v labelled", budget, auto, lab)
				}
				if want == ShapeAgent && budget == 4000 && len(lab) == 0 {
					t.Errorf("budget %d: the labelled run masks nothing; the comparison shows nothing", budget)
				}
			}
		})
	}
}

// customerService is a chat agent with tools, as a customer-service
// deployment sends it: a person's messages (one of them pasting an error
// that ends like a shell prompt), tool calls in bursts, JSON results.
func customerService(turns int) []sdk.Message {
	msgs := []sdk.Message{{Role: sdk.RoleSystem, Content: "You are an airline's support agent. Use the tools."},
		user("Hi, I want to change my flight. My user id is mia_li_3668.")}
	n := 0
	for k := 0; k < turns; k++ {
		var calls []sdk.ToolCall
		for j := 0; j < 1+k%3; j++ {
			n++
			calls = append(calls, sdk.ToolCall{ID: fmt.Sprintf("call_%d", n), Name: "get_reservation_details",
				Arguments: fmt.Sprintf(`{"reservation_id": "R%04d"}`, n)})
		}
		msgs = append(msgs, sdk.Message{Role: sdk.RoleAssistant, ToolCalls: calls})
		for _, c := range calls {
			msgs = append(msgs, sdk.Message{Role: sdk.RoleTool, ToolCallID: c.ID,
				Content: fmt.Sprintf(`{"reservation_id": %q, "user_id": "mia_li_3668", "flights": [%s], "status": "confirmed"}`,
					c.ID, strings.Repeat(`{"flight_number": "HAT001", "date": "2024-05-16", "price": 120}, `, 12))})
		}
		msgs = append(msgs, sdk.Message{Role: sdk.RoleAssistant, Content: fmt.Sprintf("I found reservation R%04d. Which flight would you like instead?", n)})
		switch k % 3 {
		case 0:
			msgs = append(msgs, user(fmt.Sprintf("The one on the 18th, reservation R%04d please.", n)))
		case 1:
			msgs = append(msgs, user("The app said:\nError 502 at checkout\n$"))
		default:
			msgs = append(msgs, user("OK, and keep my seat if you can."))
		}
	}
	return msgs
}

// TestAutoShapeChatWithTools: a chat agent with tools is read as one from
// its first tool call on: observations are the tool results, and a
// person's message is never an observation, even one that pastes output.
func TestAutoShapeChatWithTools(t *testing.T) {
	h := New(approx(t), Options{Infer: InferAuto})
	msgs := customerService(12)
	shapes := shapesWhileAdding(t, h, msgs)
	if shapes[len(shapes)-1] != ShapeTools || changes(shapes) != 1 {
		t.Fatalf("shapes %v, want chat then tools", shapes)
	}
	for _, e := range h.Entries(0, h.Len()) {
		m := e.Message
		switch {
		case m.Role == sdk.RoleUser && e.Position == 1 && e.Kind != sdk.KindTask:
			t.Errorf("%s: kind %q, want the task", m.ID, e.Kind)
		case m.Role == sdk.RoleUser && e.Position > 1 && e.Kind != sdk.KindChat:
			t.Errorf("%s %.30q: kind %q, want chat (a person)", m.ID, m.Content, e.Kind)
		case m.Role == sdk.RoleTool && e.Kind != sdk.KindObservation:
			t.Errorf("%s: kind %q, want observation", m.ID, e.Kind)
		}
	}
}

// TestAutoShapePlainChat: a chat whose assistant answers end in code and
// whose person replies once with pasted output stays a chat; so does a
// multi-agent conversation of named assistants.
func TestAutoShapePlainChat(t *testing.T) {
	asst := func(s string) sdk.Message { return sdk.Message{Role: sdk.RoleAssistant, Content: s} }
	code := "Try this:\n```python\nprint(sum(range(10)))\n```"
	cases := map[string][]sdk.Message{
		"code answers": {user("How do I sum a range in Python?"), asst(code), user("Thanks! And in Go?"),
			asst("Like this:\n```go\nfmt.Println(45)\n```"), user("$ go run .\n45\n$"), asst(code), user("Great, that works.")},
		"multi-agent": {user("Plan the release."), {Role: sdk.RoleAssistant, Name: "planner", Content: "Step 1: tag. Step 2: build."},
			{Role: sdk.RoleAssistant, Name: "reviewer", Content: "Looks fine."}, user("Go ahead."),
			{Role: sdk.RoleAssistant, Name: "planner", Content: "Tagged v1.2."}},
	}
	for name, msgs := range cases {
		h := New(approx(t), Options{Infer: InferAuto})
		shapes := shapesWhileAdding(t, h, msgs)
		if changes(shapes) != 0 || shapes[0] != ShapeChat {
			t.Errorf("%s: shapes %v, want chat throughout", name, shapes)
		}
		for _, e := range h.Entries(0, h.Len()) {
			if e.Kind == sdk.KindObservation {
				t.Errorf("%s: %s is an observation", name, e.Message.ID)
			}
		}
	}
}

// xmlLoop is an agent loop whose observations come back as user messages
// after each action (SWE-agent's xml style), made in the test.
func xmlLoop(steps int) []sdk.Message {
	msgs := []sdk.Message{{Role: sdk.RoleSystem, Content: "You are an autonomous programmer."},
		user("Fix the bug in fields.py.\n(Open file: n/a)\nbash-$")}
	for k := 0; k < steps; k++ {
		msgs = append(msgs, sdk.Message{Role: sdk.RoleAssistant, Content: fmt.Sprintf("Let's look.\n<command>\nopen fields.py %d\n</command>", k)},
			user(strings.Repeat(fmt.Sprintf("%d: line of code\n", k), 60)+"(Open file: fields.py)\nbash-$"))
	}
	return msgs
}

// TestAutoShapeChangeRecomputesView: when the decision changes a kind,
// every unlabelled message is inferred again and the view computed again
// (its epoch changes); compaction then masks the observations, and a
// restored history and a replayed journal give the same kinds and view.
func TestAutoShapeChangeRecomputesView(t *testing.T) {
	msgs := xmlLoop(8)
	h := New(approx(t), Options{Infer: InferAuto, PreserveRecent: 1})
	var ops []Op
	h.SetJournal(func(op Op) { ops = append(ops, op) })
	mustAdd(t, h, msgs[:4]...) // system, task, one action and its output: not yet an agent loop
	if s, _ := h.Shape(); s != ShapeChat || h.Kind("m4") != sdk.KindChat {
		t.Fatalf("after one action: shape %q, m4 %q", s, h.Kind("m4"))
	}
	h.Compact(1 << 20) // nothing maskable yet: the window omits
	if h.Entries(2, 3)[0].Shown != ShownOmitted {
		t.Fatalf("m3 not omitted: %+v", h.Entries(2, 3)[0])
	}
	epoch := h.Epoch()
	mustAdd(t, h, msgs[4:6]...) // the second output decides
	if s, why := h.Shape(); s != ShapeAgent || !strings.Contains(why, "2 of the 2") {
		t.Fatalf("shape %q (%s), want agent", s, why)
	}
	if h.Epoch() == epoch || h.Kind("m4") != sdk.KindObservation || h.Kind("m3") != sdk.KindAction {
		t.Fatalf("kinds not inferred again: epoch %d -> %d, m3 %q, m4 %q", epoch, h.Epoch(), h.Kind("m3"), h.Kind("m4"))
	}
	for _, e := range h.Entries(0, h.Len()) {
		if e.Shown != ShownWhole {
			t.Fatalf("%s shown %s after the view was computed again", e.Message.ID, e.Shown)
		}
	}
	checkConsistent(t, h)
	mustAdd(t, h, msgs[6:]...)
	step := h.Compact(h.ViewTokens() / 2)
	if step.Masked == 0 {
		t.Fatalf("no observation masked: %+v", step)
	}
	st, err := h.State()
	if err != nil {
		t.Fatal(err)
	}
	r := New(approx(t), Options{Infer: InferAuto, PreserveRecent: 1})
	if err := r.Restore(st); err != nil {
		t.Fatal(err)
	}
	p := New(approx(t), Options{Infer: InferAuto, PreserveRecent: 1})
	for _, op := range ops {
		if err := p.Replay(op); err != nil {
			t.Fatal(err)
		}
	}
	for name, other := range map[string]*History{"restored": r, "replayed": p} {
		if diff := cmp.Diff(h.View(), other.View()); diff != "" {
			t.Errorf("%s view differs (-live +%s):\n%s", name, name, diff)
		}
		if diff := cmp.Diff(kindsOf(t, h), kindsOf(t, other)); diff != "" {
			t.Errorf("%s kinds differ:\n%s", name, diff)
		}
		if s, _ := other.Shape(); s != ShapeAgent {
			t.Errorf("%s shape %q", name, s)
		}
	}
}

// TestAutoShapeBatchUndone: a refused batch that would have changed the
// decision leaves the shape, the kinds and the view as they were.
func TestAutoShapeBatchUndone(t *testing.T) {
	msgs := xmlLoop(3)
	h := New(approx(t), Options{Infer: InferAuto, PreserveRecent: 1})
	mustAdd(t, h, msgs[:4]...)
	h.Compact(1 << 20)
	view, kinds := h.View(), kindsOf(t, h)
	bad := result("nowhere", "an answer to no call")
	if _, err := h.AddAll(append(append([]sdk.Message(nil), msgs[4:]...), bad)); err == nil {
		t.Fatal("a result answering no call was accepted")
	}
	if s, _ := h.Shape(); s != ShapeChat {
		t.Errorf("shape %q after the refused batch", s)
	}
	if diff := cmp.Diff(view, h.View()); diff != "" {
		t.Errorf("view changed (-before +after):\n%s", diff)
	}
	if diff := cmp.Diff(kinds, kindsOf(t, h)); diff != "" {
		t.Errorf("kinds changed:\n%s", diff)
	}
	checkConsistent(t, h)
}

// TestLatestRequestKeptWhole: in a chat agent's tool loop, the person's
// latest message is kept whole however many tool calls follow it and
// whatever must go; the request before it goes once a newer one comes.
func TestLatestRequestKeptWhole(t *testing.T) {
	h := New(approx(t), Options{Infer: InferAuto, PreserveRecent: 1})
	mustAdd(t, h, customerService(3)...)
	mustAdd(t, h, user("Now cancel reservation R0003 and refund it to my card."))
	req := h.Len() // its position + 1
	for k := 0; k < 12; k++ {
		id := fmt.Sprintf("burst_%d", k)
		mustAdd(t, h, sdk.Message{Role: sdk.RoleAssistant, ToolCalls: []sdk.ToolCall{tc(id, "search")}}, result(id, big()))
	}
	h.Compact(1 << 20)
	checkConsistent(t, h)
	shown := h.Entries(req-1, req)[0]
	if shown.Shown != ShownWhole {
		t.Fatalf("the latest request is %s, want whole", shown.Shown)
	}
	view := h.View()
	if !strings.Contains(view[len(view)-3].Content, "cancel reservation R0003") {
		t.Errorf("the request is not where it stands, before the preserved turn: %v", viewIDs(h))
	}
	// A newer request takes over: the old one, passed by the window, goes.
	mustAdd(t, h, user("Thanks, that is all."))
	if e := h.Entries(req-1, req)[0]; e.Shown != ShownOmitted {
		t.Errorf("the earlier request is %s once a newer one came, want omitted", e.Shown)
	}
	checkConsistent(t, h)
	st, err := h.State()
	if err != nil {
		t.Fatal(err)
	}
	r := New(approx(t), Options{Infer: InferAuto, PreserveRecent: 1})
	if err := r.Restore(st); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(h.View(), r.View()); diff != "" {
		t.Errorf("restored view differs:\n%s", diff)
	}
}

// TestPreserveCountsTurns: an assistant message and the tool results
// answering it are one turn, so a burst of parallel calls is preserved
// whole with the request before it.
func TestPreserveCountsTurns(t *testing.T) {
	h := New(approx(t), Options{PreserveRecent: 2})
	mustAdd(t, h, user("task"), user(big()), sdk.Message{Role: sdk.RoleAssistant, Content: big()}, user("do these"))
	var calls []sdk.ToolCall
	for k := 0; k < 6; k++ {
		calls = append(calls, tc(fmt.Sprintf("c%d", k), "bash"))
	}
	mustAdd(t, h, call("", calls...))
	for _, c := range calls {
		mustAdd(t, h, result(c.ID, big()))
	}
	h.Compact(1 << 20)
	checkConsistent(t, h)
	if got, want := strings.Join(viewIDs(h), ","), "m1,,m4,m5,m6,m7,m8,m9,m10,m11"; got != want {
		t.Errorf("view %s, want %s (the task, the marker, then the two preserved turns whole)", got, want)
	}
}
