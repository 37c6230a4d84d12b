package tooloutput

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/ctxhost/ctxhost/sdk"
	"github.com/google/go-cmp/cmp"
)

const enc = "cl100k_base"

func newSession(t testing.TB, config string) *toolOutputSession {
	t.Helper()
	p := &toolOutputPlugin{keepRecent: defaultKeepRecent}
	if err := p.Configure(json.RawMessage(config)); err != nil {
		t.Fatalf("Configure(%s): %v", config, err)
	}
	return p.NewSession("s1").(*toolOutputSession)
}

func mustApply(t testing.TB, s sdk.Session, op, args string) string {
	t.Helper()
	out, err := s.Apply(context.Background(), op, json.RawMessage(args))
	if err != nil {
		t.Fatalf("Apply(%s, %s): %v", op, args, err)
	}
	return string(out)
}

func text(t testing.TB, s *toolOutputSession) string {
	t.Helper()
	c, err := s.Component(context.Background(), enc)
	if err != nil {
		t.Fatalf("Component: %v", err)
	}
	if c == nil {
		return ""
	}
	return c.Text
}

// sample records three outputs with keep_recent 2.
func sample(t testing.TB) *toolOutputSession {
	s := newSession(t, `{"keep_recent":2}`)
	mustApply(t, s, opAddOutput, `{"tool":"bash","output":"line 1\nline 2\nline 3\n","exit_code":1}`)
	mustApply(t, s, opAddOutput, `{"tool":"grep","output":"src/parse.go:12: func parseDate(","exit_code":0,"call_id":"call_7"}`)
	mustApply(t, s, opAddOutput, `{"tool":"ls","output":""}`)
	return s
}

func TestRenderAndOps(t *testing.T) {
	s := sample(t)
	want := "Tool outputs (oldest first; get_output with an id returns the full text):\n" +
		"[bash output masked: 3 lines, 21 bytes, exit code 1; id=o1]\n" +
		"--- o2: grep, exit code 0, call_id call_7 ---\n" +
		"src/parse.go:12: func parseDate(\n" +
		"--- o3: ls ---\n" +
		"(no output)\n"
	if diff := cmp.Diff(want, text(t, s)); diff != "" {
		t.Errorf("component (-want +got):\n%s", diff)
	}
	if got, want := mustApply(t, s, opGetOutput, `{"id":"o1"}`),
		`{"id":"o1","tool":"bash","output":"line 1\nline 2\nline 3\n","exit_code":1,"lines":3,"bytes":21,"shown":"placeholder"}`; got != want {
		t.Errorf("get_output = %s, want %s", got, want)
	}
	if got, want := mustApply(t, s, opList, ``),
		`{"outputs":[{"id":"o1","tool":"bash","exit_code":1,"lines":3,"bytes":21,"shown":"placeholder"},`+
			`{"id":"o2","tool":"grep","exit_code":0,"call_id":"call_7","lines":1,"bytes":32,"shown":"full"},`+
			`{"id":"o3","tool":"ls","lines":0,"bytes":0,"shown":"full"}]}`; got != want {
		t.Errorf("list = %s, want %s", got, want)
	}
	if got := mustApply(t, s, opAddOutput, `{"tool":"cat","output":"x"}`); got != `{"id":"o4"}` {
		t.Errorf("add_output = %s", got)
	}
	empty := newSession(t, `{}`)
	if c, err := empty.Component(context.Background(), enc); c != nil || err != nil {
		t.Errorf("Component without outputs = %+v, %v; want nil, nil", c, err)
	}
}

func TestAlreadyMaskedOutputIsNotMaskedAgain(t *testing.T) {
	s := newSession(t, `{"keep_recent":0}`)
	ph := "[bash output masked: 9 lines, 300 bytes, exit code 0; id=x1]"
	mustApply(t, s, opAddOutput, fmt.Sprintf(`{"tool":"bash","output":%q}`, ph))
	want := "Tool outputs (oldest first; get_output with an id returns the full text):\n" + ph + "\n"
	if diff := cmp.Diff(want, text(t, s)); diff != "" {
		t.Errorf("component (-want +got):\n%s", diff)
	}
}

func TestOpErrorsChangeNothing(t *testing.T) {
	tests := []struct {
		name, op, args string
		want           error
	}{
		{"unknown op", "clear", `{}`, sdk.ErrUnknownOp},
		{"malformed json", opAddOutput, `{"tool":`, sdk.ErrInvalidArgs},
		{"unknown field", opAddOutput, `{"tool":"bash","output":"x","stderr":""}`, sdk.ErrInvalidArgs},
		{"missing tool", opAddOutput, `{"output":"x"}`, sdk.ErrInvalidArgs},
		{"tool with newline", opAddOutput, `{"tool":"a\nb","output":"x"}`, sdk.ErrInvalidArgs},
		{"missing output", opAddOutput, `{"tool":"bash"}`, sdk.ErrInvalidArgs},
		{"output of wrong type", opAddOutput, `{"tool":"bash","output":3}`, sdk.ErrInvalidArgs},
		{"fractional exit code", opAddOutput, `{"tool":"bash","output":"x","exit_code":1.5}`, sdk.ErrInvalidArgs},
		{"call id with newline", opAddOutput, `{"tool":"bash","output":"x","call_id":"a\nb"}`, sdk.ErrInvalidArgs},
		{"get without id", opGetOutput, `{}`, sdk.ErrInvalidArgs},
		{"get unknown id", opGetOutput, `{"id":"o99"}`, sdk.ErrNotFound},
		{"list with args", opList, `{"all":true}`, sdk.ErrInvalidArgs},
		{"trailing data", opList, `{}{}`, sdk.ErrInvalidArgs},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := sample(t)
			before, _ := s.State()
			_, err := s.Apply(context.Background(), tt.op, json.RawMessage(tt.args))
			if !errors.Is(err, tt.want) {
				t.Fatalf("Apply(%s, %s) error = %v, want %v", tt.op, tt.args, err, tt.want)
			}
			after, _ := s.State()
			if diff := cmp.Diff(string(before), string(after)); diff != "" {
				t.Errorf("state changed by a failed op (-before +after):\n%s", diff)
			}
		})
	}
}

func TestConfigure(t *testing.T) {
	tests := []struct {
		config string
		want   int
		err    bool
	}{
		{``, 10, false},
		{`{}`, 10, false},
		{`{"keep_recent":null}`, 10, false},
		{`{"keep_recent":0}`, 0, false},
		{`{"keep_recent":3}`, 3, false},
		{`{"keep_recent":-1}`, 0, true},
		{`{"keep_recent":2.5}`, 0, true},
		{`{"keep_recent":"3"}`, 0, true},
		{`{"keep":3}`, 0, true},
		{`[]`, 0, true},
	}
	for _, tt := range tests {
		p := &toolOutputPlugin{keepRecent: 7}
		err := p.Configure(json.RawMessage(tt.config))
		if tt.err {
			if !errors.Is(err, sdk.ErrInvalidArgs) || p.keepRecent != 7 {
				t.Errorf("Configure(%s) = %v, keep_recent %d; want ErrInvalidArgs, unchanged", tt.config, err, p.keepRecent)
			}
			continue
		}
		if err != nil || p.keepRecent != tt.want {
			t.Errorf("Configure(%s) = %v, keep_recent %d; want nil, %d", tt.config, err, p.keepRecent, tt.want)
		}
	}
}

// bigSession records n outputs of varying size, all within keep_recent.
func bigSession(t testing.TB, n int) *toolOutputSession {
	s := newSession(t, fmt.Sprintf(`{"keep_recent":%d}`, n))
	for i := range n {
		body := strings.Repeat(fmt.Sprintf("row %d: value=%d, status ok.\n", i, i*7), 1+i%9)
		args, _ := json.Marshal(map[string]any{"tool": []string{"bash", "grep", "pytest"}[i%3], "output": body, "exit_code": i % 2})
		mustApply(t, s, opAddOutput, string(args))
	}
	return s
}

func shownStates(s *toolOutputSession) string {
	var b strings.Builder
	for i := range s.outputs {
		b.WriteString(s.shown(i)[:1])
	}
	return b.String()
}

func TestCompactOrder(t *testing.T) {
	s := bigSession(t, 6)
	var got []string
	for range 20 {
		res, err := s.Compact(context.Background(), sdk.CompactRequest{TokensNeeded: 1, Encoding: enc})
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, shownStates(s))
		if res.ClaimedFreed == 0 {
			break
		}
	}
	// f: full, p: placeholder, d: dropped. Masks oldest first, skipping o1
	// (one short line: its placeholder is longer), then drops oldest first,
	// and stops when nothing is left.
	want := []string{"fpffff", "fppfff", "fpppff", "fppppf", "fppppp", "dppppp", "ddpppp", "dddppp", "ddddpp", "dddddp", "dddddd", "dddddd"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("shown states after each Compact(1) (-want +got):\n%s", diff)
	}
	for i := range s.outputs {
		if got := mustApply(t, s, opGetOutput, fmt.Sprintf(`{"id":"o%d"}`, i+1)); !strings.Contains(got, `"shown":"dropped"`) || !strings.Contains(got, "row") {
			t.Errorf("get_output of a dropped output = %s", got)
		}
	}
}

func TestCompactFreesWhatIsNeeded(t *testing.T) {
	for _, encoding := range []string{"cl100k_base", "o200k_base", "approximate"} {
		for _, needed := range []int{1, 20, 150, 600, 1200, 100000} {
			t.Run(fmt.Sprint(encoding, "/", needed), func(t *testing.T) {
				checkCompact(t, bigSession(t, 30), encoding, needed)
			})
		}
		t.Run(encoding+"/repeated", func(t *testing.T) {
			s := bigSession(t, 20)
			for range 100 {
				if !checkCompact(t, s, encoding, 40) {
					break
				}
			}
		})
	}
}

// checkCompact compacts s and checks the result against a recount: never
// grows, frees enough unless everything is dropped, the claim is exact (BPE)
// or a lower bound (approximate). It reports whether anything changed.
func checkCompact(t *testing.T, s *toolOutputSession, encoding string, needed int) bool {
	t.Helper()
	count := func() int {
		n, err := sdk.CountTokens(encoding, s.render())
		if err != nil {
			t.Fatal(err)
		}
		return n
	}
	before := count()
	res, err := s.Compact(context.Background(), sdk.CompactRequest{TokensNeeded: needed, Encoding: encoding})
	if err != nil {
		t.Fatal(err)
	}
	freed := before - count()
	if freed < 0 {
		t.Fatalf("compaction grew the component by %d tokens (%s)", -freed, res.Log)
	}
	if encoding == "approximate" && res.ClaimedFreed > freed || encoding != "approximate" && res.ClaimedFreed != freed {
		t.Errorf("claimed %d freed, recount says %d (%s)", res.ClaimedFreed, freed, res.Log)
	}
	if freed < needed && !strings.HasSuffix(shownStates(s), "d") && !strings.HasSuffix(shownStates(s), "dp") {
		t.Errorf("freed %d < needed %d with outputs left (%s, %s)", freed, needed, shownStates(s), res.Log)
	}
	return freed > 0
}

func TestCompactNothingToDoChangesNothing(t *testing.T) {
	s := newSession(t, `{}`)
	mustApply(t, s, opAddOutput, `{"tool":"true","output":"ok"}`)
	before, _ := s.State()
	res, err := s.Compact(context.Background(), sdk.CompactRequest{TokensNeeded: 5, Encoding: enc})
	if err != nil || res.ClaimedFreed != 0 {
		t.Fatalf("Compact = %+v, %v", res, err)
	}
	if after, _ := s.State(); string(after) != string(before) {
		t.Errorf("a compaction that cannot shrink changed the state: %s", after)
	}
	if _, err := s.Compact(context.Background(), sdk.CompactRequest{TokensNeeded: 5, Encoding: "nope"}); err == nil {
		t.Error("Compact with an unknown encoding succeeded")
	}
}

func TestStateRoundTrip(t *testing.T) {
	s := bigSession(t, 8)
	if _, err := s.Compact(context.Background(), sdk.CompactRequest{TokensNeeded: 400, Encoding: enc}); err != nil {
		t.Fatal(err)
	}
	st, err := s.State()
	if err != nil {
		t.Fatal(err)
	}
	r := newSession(t, `{"keep_recent":8}`)
	if err := r.Restore(st); err != nil {
		t.Fatalf("Restore: %v", err)
	}
	st2, _ := r.State()
	if diff := cmp.Diff(string(st), string(st2)); diff != "" {
		t.Errorf("state after round trip (-want +got):\n%s", diff)
	}
	if got, want := text(t, r), text(t, s); got != want {
		t.Errorf("component after round trip = %q, want %q", got, want)
	}
	if got := mustApply(t, r, opAddOutput, `{"tool":"x","output":"y"}`); got != `{"id":"o9"}` {
		t.Errorf("add_output after restore = %s, want o9", got)
	}
	st, _ = r.State()
	for _, bad := range []string{
		`{"version":2,"next_id":0,"outputs":[]}`,
		`{"version":1,"next_id":1,"outputs":[{"id":"o1","tool":"a","output":""},{"id":"o1","tool":"a","output":""}]}`,
		`{"version":1,"next_id":1,"outputs":[{"id":"o2","tool":"a","output":""}]}`,
		`{"version":1,"next_id":1,"outputs":[{"id":"x","tool":"a","output":""}]}`,
		`{"version":1,"next_id":1,"outputs":[{"id":"o1","tool":"","output":""}]}`,
		`{"version":1,"next_id":1,"outputs":[null]}`,
		`{"version":1,"next_id":0,"outputs":[],"extra":1}`,
	} {
		if err := r.Restore([]byte(bad)); err == nil {
			t.Errorf("Restore(%s) succeeded", bad)
		}
		if after, _ := r.State(); string(after) != string(st) {
			t.Errorf("failed Restore(%s) changed the state", bad)
		}
	}
}

// BenchmarkCompact1k compacts 1,000 outputs (cold: nothing counted yet)
// by half their tokens.
func BenchmarkCompact1k(b *testing.B) {
	base := bigSession(b, 1000)
	st, _ := base.State()
	full, _ := sdk.CountTokens(enc, base.render())
	b.ResetTimer()
	for b.Loop() {
		b.StopTimer()
		s := newSession(b, `{"keep_recent":1000}`)
		if err := s.Restore(st); err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
		if _, err := s.Compact(context.Background(), sdk.CompactRequest{TokensNeeded: full / 2, Encoding: enc}); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkCompact1kWarm is BenchmarkCompact1k with the blocks already
// counted by an earlier compaction.
func BenchmarkCompact1kWarm(b *testing.B) {
	s := bigSession(b, 1000)
	full, _ := sdk.CountTokens(enc, s.render())
	req := sdk.CompactRequest{TokensNeeded: full / 2, Encoding: enc}
	for _, o := range s.outputs {
		s.blockTokens(o, enc)
	}
	b.ResetTimer()
	for b.Loop() {
		b.StopTimer()
		for _, o := range s.outputs {
			o.Masked, o.Dropped = false, false
		}
		b.StartTimer()
		if _, err := s.Compact(context.Background(), req); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkCount1k is the reference: one count of the 1,000 outputs.
func BenchmarkCount1k(b *testing.B) {
	text := bigSession(b, 1000).render()
	b.ResetTimer()
	for b.Loop() {
		if _, err := sdk.CountTokens(enc, text); err != nil {
			b.Fatal(err)
		}
	}
}
