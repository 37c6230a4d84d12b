package history

import (
	"os"
	"os/exec"
	"reflect"
	"runtime"
	"strconv"
	"strings"
	"testing"

	"github.com/ctxhost/ctxhost/sdk"
)

// spillFromEnv makes the package's tests spill omitted messages from the
// first one (TestSuiteSpilled runs them so).
const spillFromEnv = "CTXHOST_TEST_HISTORY_SPILL_FROM"

func init() {
	if v := os.Getenv(spillFromEnv); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil {
			panic(spillFromEnv + ": " + err.Error())
		}
		spillMin = n
	}
}

// TestSuiteSpilled runs every test of the package again with omitted
// messages spilled from the first one, so that each view, compaction,
// state and restore test also checks that a spilled message comes back
// as it was added.
func TestSuiteSpilled(t *testing.T) {
	if testing.Short() {
		t.Skip("slow: make test runs it, make test-short (-short) leaves it out")
	}
	if os.Getenv(spillFromEnv) != "" {
		t.Skip("this run spills already")
	}
	cmd := exec.Command(os.Args[0], "-test.count=1", "-test.run=.", "-test.skip=^TestSuiteSpilled$")
	cmd.Env = append(os.Environ(), spillFromEnv+"=0")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("the tests with every omitted message spilled: %v\n%s", err, out)
	}
	if !strings.Contains(string(out), "PASS") {
		t.Fatalf("the spilled run passed nothing:\n%s", out)
	}
}

// TestSpillCodecCoversFields fails when sdk.Message, sdk.Part or
// sdk.ToolCall gain a field the spill encoding does not write: add it to
// appendMessage and decodeMessage, then here.
func TestSpillCodecCoversFields(t *testing.T) {
	for _, c := range []struct {
		v    any
		want int
	}{{sdk.Message{}, 12}, {sdk.Part{}, 13}, {sdk.ToolCall{}, 4}} {
		if n := reflect.TypeOf(c.v).NumField(); n != c.want {
			t.Errorf("%T has %d fields, the spill encoding writes %d", c.v, n, c.want)
		}
	}
}

func TestSpillCodecRoundTrip(t *testing.T) {
	msgs := []sdk.Message{
		{},
		{ID: "m1", Role: sdk.RoleUser, Content: "héllo \x00 <b>&\u2028", Kind: sdk.KindTask, Pinned: true},
		{ID: "a", Role: sdk.RoleAssistant, Name: "n", SpeakerType: "ai", ToolCalls: []sdk.ToolCall{{ID: "c1", Name: "bash", Arguments: `{"x":1}`, Signature: "sig"}},
			Metadata: map[string]string{"k": "v", "": ""}},
		{ID: "t", Role: sdk.RoleTool, ToolCallID: "c1", ToolName: "bash", Parts: []sdk.Part{
			{Type: sdk.PartText, Text: "out"},
			{Type: "image", MediaType: "image/png", Data: []byte{0, 1, 2}, URL: "u", Width: 3, Height: -4, Detail: "low", Pages: 2,
				Title: "t", Signature: "s", Opaque: "o", Provider: "p"},
			{Type: "image", Data: []byte{}},
		}},
		{Parts: []sdk.Part{}, ToolCalls: []sdk.ToolCall{}, Metadata: map[string]string{}},
	}
	for _, m := range msgs {
		got, err := decodeMessage(appendMessage(nil, &m))
		if err != nil {
			t.Fatalf("decode %+v: %v", m, err)
		}
		if !reflect.DeepEqual(got, m) {
			t.Errorf("round trip:\n got %#v\nwant %#v", got, m)
		}
	}
	b := appendMessage(nil, &msgs[3])
	for n := range len(b) {
		if _, err := decodeMessage(b[:n]); err == nil {
			t.Fatalf("a record cut to %d of %d bytes decoded", n, len(b))
		}
	}
}

// longSession adds n exchanges (an assistant's call and its output of
// size bytes) after a task.
func longSession(t testing.TB, h *History, n, size int) {
	t.Helper()
	mustAdd(t, h, user("fix the parser"))
	out := strings.Repeat("x", size)
	for i := range n {
		id := "c" + strconv.Itoa(i)
		mustAdd(t, h, call("step "+strconv.Itoa(i), tc(id, "bash")), result(id, out[:size-len(id)]+id))
	}
}

// TestOmittedMessagesSpilled: once the window omits most of a long
// session, the omitted messages are out of memory, and every way of
// reading them back gives the messages added.
func TestOmittedMessagesSpilled(t *testing.T) {
	defer func(n int) { spillMin = n }(spillMin)
	spillMin = 100
	h := New(approx(t), Options{})
	longSession(t, h, 400, 300)
	before := h.All()
	view := h.View()
	h.Compact(h.ViewTokens() - 2000)
	spilled := 0
	for i := range h.entries {
		e := &h.entries[i]
		if (e.msg == nil) != (e.hidden && !h.pinned(i)) {
			t.Fatalf("entry %d: spilled %v, omitted %v, pinned %v", i, e.msg == nil, e.hidden, h.pinned(i))
		}
		if e.msg == nil {
			spilled++
		}
	}
	if spilled < 400 {
		t.Fatalf("%d of %d messages spilled after omitting most of them", spilled, len(h.entries))
	}
	checkConsistent(t, h)
	if got := h.All(); !reflect.DeepEqual(got, before) {
		t.Fatal("All() after spilling differs from before")
	}
	if m, ok := h.Get("m2"); !ok || !reflect.DeepEqual(m, before[1]) {
		t.Fatalf("Get(m2) = %+v, %v", m, ok)
	}
	n := 0
	for m := range h.Backward() {
		if !reflect.DeepEqual(m, before[len(before)-1-n]) {
			t.Fatalf("Backward()[%d] differs", n)
		}
		n++
	}
	st, err := h.State()
	if err != nil {
		t.Fatal(err)
	}
	r := New(approx(t), Options{})
	if err := r.Restore(st); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(r.All(), before) || !reflect.DeepEqual(r.View(), h.View()) {
		t.Fatal("a restored history differs")
	}
	h.ResetView()
	if got := h.View(); !reflect.DeepEqual(got, view) {
		t.Fatal("the view after ResetView differs from the one before compaction")
	}
	for i := range h.entries {
		if h.entries[i].msg == nil {
			t.Fatalf("entry %d is still spilled after ResetView", i)
		}
	}
}

// TestOmittedMessagesLeaveMemory: the live heap of a long session whose
// view omits nearly everything holds far less than its messages' bytes.
func TestOmittedMessagesLeaveMemory(t *testing.T) {
	const n, size = 3000, 4000 // 12 MB of tool outputs
	h := New(approx(t), Options{})
	base := liveHeap()
	longSession(t, h, n, size)
	h.Compact(h.ViewTokens() - 5000)
	used := liveHeap() - base
	if used > n*size/5 {
		t.Fatalf("a history of %d MB of messages, nearly all omitted, holds %d MB", n*size>>20, used>>20)
	}
	t.Logf("%d messages of %d MB: %d KB live (%d bytes a message)", 2*n+1, n*size>>20, used>>10, used/(2*n+1))
	runtime.KeepAlive(h)
}

func liveHeap() int {
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return int(ms.HeapAlloc)
}

func TestMessageIDs(t *testing.T) {
	x := newMessageIDs()
	ids := []string{"m1", "m3", "m05", "m0", "m-1", "m999999999", "x", "m", "m2"}
	for i, id := range ids {
		x.put(id, i)
	}
	for i, id := range ids {
		if got, ok := x.get(id); !ok || got != i {
			t.Errorf("get(%q) = %d, %v; want %d", id, got, ok, i)
		}
	}
	if len(x.own) > 4 || len(x.other) != 6 {
		t.Errorf("own %v, other %v: want m1, m2, m3 by number and the rest in the map", x.own, x.other)
	}
	for _, id := range []string{"m4", "m5", "m1000", "y"} {
		if _, ok := x.get(id); ok {
			t.Errorf("get(%q) found an id never put", id)
		}
	}
	x.del("m3")
	x.del("m05")
	for _, id := range []string{"m3", "m05"} {
		if _, ok := x.get(id); ok {
			t.Errorf("get(%q) after del found it", id)
		}
	}
	if i, ok := x.get("m2"); !ok || i != 8 {
		t.Errorf("get(m2) = %d, %v after deleting others", i, ok)
	}
}
