package memory

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/ctxhost/ctxhost/sdk"
	"github.com/google/go-cmp/cmp"
)

const enc = "cl100k_base"

func newSession(t testing.TB, maxEntries int) *memorySession {
	t.Helper()
	p := &memoryPlugin{}
	if err := p.Configure(json.RawMessage(fmt.Sprintf(`{"max_entries":%d}`, maxEntries))); err != nil {
		t.Fatalf("Configure: %v", err)
	}
	return p.NewSession("s1").(*memorySession)
}

func mustApply(t testing.TB, s sdk.Session, op, args string) string {
	t.Helper()
	out, err := s.Apply(context.Background(), op, json.RawMessage(args))
	if err != nil {
		t.Fatalf("Apply(%s, %s): %v", op, args, err)
	}
	return string(out)
}

func indexText(t testing.TB, s *memorySession) string {
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

func tokens(t testing.TB, text string) int {
	t.Helper()
	n, err := sdk.CountTokens(enc, text)
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// sample stores three entries, one per turn.
func sample(t testing.TB) *memorySession {
	s := newSession(t, 0)
	mustApply(t, s, opStore, `{"key":"build_cmd","value":"go build ./..."}`)
	s.Prepared(context.Background(), sdk.Budget{})
	mustApply(t, s, opStore, `{"key":"api_schema","value":{"openapi":"3.1", "paths":{}},"description":"OpenAPI schema of the\n billing service","importance":0.9}`)
	s.Prepared(context.Background(), sdk.Budget{})
	mustApply(t, s, opStore, `{"key":"user","value":["ann",42],"description":"who asked","importance":0.2}`)
	return s
}

func TestRenderAndOps(t *testing.T) {
	s := sample(t)
	want := "Memory index (get with a key returns its value):\n" +
		"- api_schema: OpenAPI schema of the billing service\n" +
		"- build_cmd\n" +
		"- user: who asked\n"
	if diff := cmp.Diff(want, indexText(t, s)); diff != "" {
		t.Errorf("index (-want +got):\n%s", diff)
	}
	if got, want := mustApply(t, s, opGet, `{"key":"api_schema"}`),
		`{"key":"api_schema","value":{"openapi":"3.1","paths":{}},"description":"OpenAPI schema of the\n billing service","importance":0.9,"was_evicted":false}`; got != want {
		t.Errorf("get = %s, want %s", got, want)
	}
	if got, want := mustApply(t, s, opStore, `{"key":"user","value":"bob"}`), `{"key":"user","replaced":true}`; got != want {
		t.Errorf("store (replace) = %s, want %s", got, want)
	}
	if got, want := mustApply(t, s, opList, ``),
		`{"entries":[{"key":"api_schema","description":"OpenAPI schema of the\n billing service","importance":0.9,"bytes":28,"evicted":false},`+
			`{"key":"build_cmd","importance":0.5,"bytes":16,"evicted":false},`+
			`{"key":"user","importance":0.5,"bytes":5,"evicted":false}],"evicted":0}`; got != want {
		t.Errorf("list = %s, want %s", got, want)
	}
	if got, want := mustApply(t, s, opDelete, `{"key":"build_cmd"}`), `{"deleted":"build_cmd"}`; got != want {
		t.Errorf("delete = %s, want %s", got, want)
	}
	mustApply(t, s, opDelete, `{"key":"api_schema"}`)
	mustApply(t, s, opDelete, `{"key":"user"}`)
	if c, err := s.Component(context.Background(), enc); c != nil || err != nil {
		t.Errorf("Component of an empty memory = %+v, %v; want nil, nil", c, err)
	}
}

func TestOpErrorsChangeNothing(t *testing.T) {
	tests := []struct {
		name, op, args string
		want           error
	}{
		{"unknown op", "forget", `{}`, sdk.ErrUnknownOp},
		{"malformed json", opStore, `{"key":`, sdk.ErrInvalidArgs},
		{"unknown field", opStore, `{"key":"k","value":1,"ttl":3}`, sdk.ErrInvalidArgs},
		{"empty key", opStore, `{"key":"","value":1}`, sdk.ErrInvalidArgs},
		{"key with newline", opStore, `{"key":"a\nb","value":1}`, sdk.ErrInvalidArgs},
		{"key with surrounding space", opStore, `{"key":" a","value":1}`, sdk.ErrInvalidArgs},
		{"missing value", opStore, `{"key":"k"}`, sdk.ErrInvalidArgs},
		{"null value", opStore, `{"key":"k","value":null}`, sdk.ErrInvalidArgs},
		{"importance above 1", opStore, `{"key":"k","value":1,"importance":1.5}`, sdk.ErrInvalidArgs},
		{"negative importance", opStore, `{"key":"build_cmd","value":1,"importance":-0.1}`, sdk.ErrInvalidArgs},
		{"importance as text", opStore, `{"key":"k","value":1,"importance":"high"}`, sdk.ErrInvalidArgs},
		{"get without key", opGet, `{}`, sdk.ErrInvalidArgs},
		{"get unknown key", opGet, `{"key":"nope"}`, sdk.ErrNotFound},
		{"delete unknown key", opDelete, `{"key":"nope"}`, sdk.ErrNotFound},
		{"list with args", opList, `{"all":true}`, sdk.ErrInvalidArgs},
		{"trailing data", opGet, `{"key":"user"} x`, sdk.ErrInvalidArgs},
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
		{``, 0, false},
		{`{}`, 0, false},
		{`{"max_entries":null}`, 0, false},
		{`{"max_entries":25}`, 25, false},
		{`{"max_entries":-1}`, 0, true},
		{`{"max_entries":2.5}`, 0, true},
		{`{"max_entries":"10"}`, 0, true},
		{`{"max_entry":10}`, 0, true},
	}
	for _, tt := range tests {
		p := &memoryPlugin{maxEntries: 7}
		err := p.Configure(json.RawMessage(tt.config))
		if tt.err {
			if !errors.Is(err, sdk.ErrInvalidArgs) || p.maxEntries != 7 {
				t.Errorf("Configure(%s) = %v, max_entries %d; want ErrInvalidArgs, unchanged", tt.config, err, p.maxEntries)
			}
			continue
		}
		if err != nil || p.maxEntries != tt.want {
			t.Errorf("Configure(%s) = %v, max_entries %d; want nil, %d", tt.config, err, p.maxEntries, tt.want)
		}
	}
}

func TestMaxEntriesDropsEvictedFirst(t *testing.T) {
	s := newSession(t, 3)
	for _, k := range []string{"a", "b", "c"} {
		mustApply(t, s, opStore, `{"key":"`+k+`","value":1}`)
	}
	mustApply(t, s, opGet, `{"key":"a"}`)
	if got, want := mustApply(t, s, opStore, `{"key":"d","value":1}`), `{"key":"d","replaced":false,"dropped":"b"}`; got != want {
		t.Errorf("store beyond max_entries = %s, want %s", got, want)
	}
	s.entries["d"].Evicted = true
	if got, want := mustApply(t, s, opStore, `{"key":"e","value":1}`), `{"key":"e","replaced":false,"dropped":"d"}`; got != want {
		t.Errorf("store beyond max_entries with an evicted entry = %s, want %s", got, want)
	}
	if got, want := mustApply(t, s, opStore, `{"key":"e","value":2}`), `{"key":"e","replaced":true}`; got != want {
		t.Errorf("replacing at max_entries = %s, want %s", got, want)
	}
}

// evictedKeys lists evicted keys in key order.
func evictedKeys(s *memorySession) []string {
	var out []string
	for _, e := range s.sortedBy(func(e *entry) bool { return e.Evicted }, byKey) {
		out = append(out, e.Key)
	}
	return out
}

func TestCompactEvictionOrder(t *testing.T) {
	// Turn 0: a (0.9), b (0.1), c (0.5); turn 1: d (0.0); then get(a) in turn 1.
	s := newSession(t, 0)
	mustApply(t, s, opStore, `{"key":"a","value":1,"description":"alpha alpha alpha","importance":0.9}`)
	mustApply(t, s, opStore, `{"key":"b","value":1,"description":"beta beta beta","importance":0.1}`)
	mustApply(t, s, opStore, `{"key":"c","value":1,"description":"gamma gamma gamma"}`)
	s.Prepared(context.Background(), sdk.Budget{})
	mustApply(t, s, opStore, `{"key":"d","value":1,"description":"delta delta delta","importance":0}`)
	mustApply(t, s, opGet, `{"key":"a"}`)
	// Eviction order: b, c (turn 0 by importance), then d, a (turn 1 by use).
	wantOrder := []string{"b", "c", "d", "a"}
	var got []string
	for range wantOrder {
		text := indexText(t, s)
		res, err := s.Compact(context.Background(), sdk.CompactRequest{TokensNeeded: 1, Encoding: enc})
		if err != nil {
			t.Fatal(err)
		}
		if tokens(t, indexText(t, s)) >= tokens(t, text) {
			break
		}
		got = append(got, loggedKeys(t, res.Log)...)
	}
	if diff := cmp.Diff(wantOrder, got); diff != "" {
		t.Errorf("eviction order (-want +got):\n%s", diff)
	}
	want := "Memory index (get with a key returns its value):\n" +
		"4 entries evicted from the index; list shows their keys, get returns them.\n"
	if diff := cmp.Diff(want, indexText(t, s)); diff != "" {
		t.Errorf("index with everything evicted (-want +got):\n%s", diff)
	}
	res, err := s.Compact(context.Background(), sdk.CompactRequest{TokensNeeded: 10, Encoding: enc})
	if err != nil || res.ClaimedFreed != 0 || !strings.Contains(res.Log, "already evicted") {
		t.Errorf("Compact with nothing left = %+v, %v", res, err)
	}
	// Evicted entries stay retrievable, and get brings them back.
	if got := mustApply(t, s, opGet, `{"key":"c"}`); !strings.Contains(got, `"was_evicted":true`) {
		t.Errorf("get of an evicted entry = %s", got)
	}
	want = "Memory index (get with a key returns its value):\n" +
		"- c: gamma gamma gamma\n" +
		"3 entries evicted from the index; list shows their keys, get returns them.\n"
	if diff := cmp.Diff(want, indexText(t, s)); diff != "" {
		t.Errorf("index after get of an evicted entry (-want +got):\n%s", diff)
	}
}

// loggedKeys returns the keys a compaction log names, in eviction order.
func loggedKeys(t *testing.T, log string) []string {
	t.Helper()
	_, rest, ok := strings.Cut(log, "lowest importance first): ")
	list, _, ok2 := strings.Cut(rest, ";")
	if !ok || !ok2 {
		t.Fatalf("log %q does not list evicted keys", log)
	}
	return strings.Split(list, ", ")
}

func TestCompactFreesWhatIsNeeded(t *testing.T) {
	for _, encoding := range []string{"cl100k_base", "o200k_base", "approximate"} {
		for _, needed := range []int{1, 10, 50, 200, 400, 100000} {
			t.Run(fmt.Sprint(encoding, "/", needed), func(t *testing.T) {
				s := manyEntries(t, 60)
				checkCompact(t, s, encoding, needed)
			})
		}
		t.Run(encoding+"/repeated", func(t *testing.T) {
			s := manyEntries(t, 40)
			for len(evictedKeys(s)) < len(s.entries) {
				checkCompact(t, s, encoding, 9)
			}
		})
	}
}

// checkCompact compacts s by needed tokens and checks the result against a
// recount: enough freed unless everything is evicted, and the claim exact
// (BPE) or a lower bound (approximate).
func checkCompact(t *testing.T, s *memorySession, encoding string, needed int) {
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
	if encoding == "approximate" && res.ClaimedFreed > freed || encoding != "approximate" && res.ClaimedFreed != freed {
		t.Errorf("claimed %d freed, recount says %d (%s)", res.ClaimedFreed, freed, res.Log)
	}
	if freed < needed && len(evictedKeys(s)) < len(s.entries) {
		t.Errorf("freed %d < needed %d with entries left in the index (%s)", freed, needed, res.Log)
	}
	if freed <= 0 || !strings.Contains(res.Log, "memory: evicted") {
		t.Errorf("freed %d tokens (%s)", freed, res.Log)
	}
}

func TestCompactNeverGrows(t *testing.T) {
	s := newSession(t, 0)
	mustApply(t, s, opStore, `{"key":"a","value":1}`)
	before, _ := s.State()
	text := indexText(t, s)
	res, err := s.Compact(context.Background(), sdk.CompactRequest{TokensNeeded: 1, Encoding: enc})
	if err != nil {
		t.Fatal(err)
	}
	if got := indexText(t, s); got != text || res.ClaimedFreed != 0 {
		t.Errorf("compaction that cannot shrink changed the index to %q (%s)", got, res.Log)
	}
	if after, _ := s.State(); string(after) != string(before) {
		t.Errorf("compaction that cannot shrink changed the state")
	}
}

func TestCompactBadEncodingChangesNothing(t *testing.T) {
	s := sample(t)
	before, _ := s.State()
	if _, err := s.Compact(context.Background(), sdk.CompactRequest{TokensNeeded: 5, Encoding: "nope"}); err == nil {
		t.Fatal("Compact with an unknown encoding succeeded")
	}
	if after, _ := s.State(); string(after) != string(before) {
		t.Errorf("failed compaction changed the state")
	}
}

func manyEntries(t testing.TB, n int) *memorySession {
	s := newSession(t, 0)
	for i := range n {
		mustApply(t, s, opStore, fmt.Sprintf(`{"key":"note_%05d","value":"v%d","description":"finding number %d about module %d%s","importance":%g}`, i, i, i, i%7, []string{"", ".", "!?", " (see: x)"}[i%4], float64(i%10)/10))
		if i%5 == 4 {
			s.Prepared(context.Background(), sdk.Budget{})
		}
	}
	return s
}

func TestStateRoundTrip(t *testing.T) {
	s := manyEntries(t, 12)
	if _, err := s.Compact(context.Background(), sdk.CompactRequest{TokensNeeded: 30, Encoding: enc}); err != nil {
		t.Fatal(err)
	}
	st, err := s.State()
	if err != nil {
		t.Fatal(err)
	}
	r := sample(t)
	if err := r.Restore(st); err != nil {
		t.Fatalf("Restore: %v", err)
	}
	st2, _ := r.State()
	if diff := cmp.Diff(string(st), string(st2)); diff != "" {
		t.Errorf("state after round trip (-want +got):\n%s", diff)
	}
	if got, want := indexText(t, r), indexText(t, s); got != want {
		t.Errorf("index after round trip = %q, want %q", got, want)
	}
	for _, bad := range []string{
		`{"version":2,"turn":0,"seq":0,"entries":[]}`,
		`{"version":1,"turn":0,"seq":1,"entries":[{"key":"a","value":1,"importance":0.5,"last_turn":0,"last_seq":1},{"key":"a","value":2,"importance":0.5,"last_turn":0,"last_seq":1}]}`,
		`{"version":1,"turn":0,"seq":1,"entries":[{"key":"a","value":null,"importance":0.5,"last_turn":0,"last_seq":1}]}`,
		`{"version":1,"turn":0,"seq":1,"entries":[{"key":"a","value":1,"importance":2,"last_turn":0,"last_seq":1}]}`,
		`{"version":1,"turn":0,"seq":0,"entries":[{"key":"a","value":1,"importance":0.5,"last_turn":0,"last_seq":1}]}`,
		`{"version":1,"turn":0,"seq":0,"entries":[null]}`,
		`not json`,
	} {
		if err := r.Restore([]byte(bad)); err == nil {
			t.Errorf("Restore(%s) succeeded", bad)
		}
		if after, _ := r.State(); string(after) != string(st) {
			t.Errorf("failed Restore(%s) changed the state", bad)
		}
	}
}

func BenchmarkCompact10k(b *testing.B) {
	base := manyEntries(b, 10000)
	st, err := base.State()
	if err != nil {
		b.Fatal(err)
	}
	full := tokens(b, indexText(b, base))
	b.ResetTimer()
	for b.Loop() {
		b.StopTimer()
		s := newSession(b, 0)
		if err := s.Restore(st); err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
		if _, err := s.Compact(context.Background(), sdk.CompactRequest{TokensNeeded: full / 2, Encoding: enc}); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkCountIndex10k is the reference for BenchmarkCompact10k: one
// count of the whole 10,000-entry index.
func BenchmarkCountIndex10k(b *testing.B) {
	text := indexText(b, manyEntries(b, 10000))
	b.ResetTimer()
	for b.Loop() {
		tokens(b, text)
	}
}

// BenchmarkCompact10kWarm compacts a session whose index lines were already
// counted by an earlier compaction (the usual case after the first turn).
func BenchmarkCompact10kWarm(b *testing.B) {
	s := manyEntries(b, 10000)
	full := tokens(b, indexText(b, s))
	req := sdk.CompactRequest{TokensNeeded: full / 2, Encoding: enc}
	if _, err := s.Compact(context.Background(), req); err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	for b.Loop() {
		b.StopTimer()
		for _, e := range s.entries {
			e.Evicted = false
		}
		b.StartTimer()
		if _, err := s.Compact(context.Background(), req); err != nil {
			b.Fatal(err)
		}
	}
}

// Turns in which no entry is used leave the memory as it was, so the host
// may skip them (prepared_on_change): the state after any number of idle
// turns is the state after one, and the eviction order is the same.
func TestIdleTurnsChangeNothing(t *testing.T) {
	ctx := context.Background()
	run := func(idle int) *memorySession {
		s := newSession(t, 0)
		mustApply(t, s, opStore, `{"key":"a","value":1,"importance":0.9}`)
		mustApply(t, s, opStore, `{"key":"b","value":1,"importance":0.1}`)
		for range 1 + idle {
			s.Prepared(ctx, sdk.Budget{})
		}
		mustApply(t, s, opStore, `{"key":"c","value":1,"importance":0}`)
		for range 1 + idle {
			s.Prepared(ctx, sdk.Budget{})
		}
		mustApply(t, s, opGet, `{"key":"b"}`)
		s.Prepared(ctx, sdk.Budget{})
		return s
	}
	one, many := run(0), run(5)
	a, err := one.State()
	if err != nil {
		t.Fatal(err)
	}
	b, err := many.State()
	if err != nil {
		t.Fatal(err)
	}
	if string(a) != string(b) {
		t.Errorf("idle turns changed the state:\none turn each: %s\nsix turns each: %s", a, b)
	}
	order := func(s *memorySession) (keys []string) {
		for _, e := range s.sortedBy(all, evictionOrder) {
			keys = append(keys, e.Key)
		}
		return keys
	}
	if got, want := order(many), []string{"a", "c", "b"}; !slices.Equal(got, want) {
		t.Errorf("eviction order %v, want %v", got, want)
	}
	before, _ := many.State()
	many.Prepared(ctx, sdk.Budget{})
	if after, _ := many.State(); string(after) != string(before) {
		t.Errorf("a hook with no use since the last one changed the state:\n%s\n%s", before, after)
	}
	if !slices.Contains((&memoryPlugin{}).Describe().Capabilities, sdk.CapPreparedOnChange) {
		t.Error("the memory plugin does not declare prepared_on_change")
	}
}
