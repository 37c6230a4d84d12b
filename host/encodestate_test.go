package host

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"
	"time"
)

// TestEncodeStateAsEncodeJSON: a session's state written with its
// history's JSON spliced in reads back as encodeJSON's encoding of the
// same state, with a history, without one and with plugins after it.
func TestEncodeStateAsEncodeJSON(t *testing.T) {
	hist := []byte(`{"version":1,"messages":[{"role":"user","content":"<b>\"history\":null</b>"}]}`)
	for name, st := range map[string]sessionState{
		"history": {Version: StateVersion, Session: "s", SystemPrompt: `say "history":1`, History: historyState{data: hist},
			Plugins: []pluginState{{Name: "p", State: []byte(`{"history":2}`)}}, Position: json.RawMessage(`{"at":3}`)},
		"no history": {Version: StateVersion, Session: "s"},
	} {
		t.Run(name, func(t *testing.T) {
			got, err := encodeState(st)
			if err != nil {
				t.Fatal(err)
			}
			want, err := encodeJSON(st)
			if err != nil {
				t.Fatal(err)
			}
			var g, w any
			if err := json.Unmarshal(got, &g); err != nil {
				t.Fatalf("%s: %v", got, err)
			}
			if err := json.Unmarshal(want, &w); err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(g, w) {
				t.Fatalf("encodeState:\n%s\nencodeJSON:\n%s", got, want)
			}
			var back sessionState
			if err := json.Unmarshal(got, &back); err != nil {
				t.Fatal(err)
			}
			if string(back.History.data) != string(st.History.data) || back.SystemPrompt != st.SystemPrompt {
				t.Fatalf("read back: history %s, system prompt %q", back.History.data, back.SystemPrompt)
			}
		})
	}
}

// BenchmarkEncodeState writes the state of a session holding a 5 MB
// answer: x-encodeJSON is encodeState's time over encodeJSON's, measured
// in one run.
func BenchmarkEncodeState(b *testing.B) {
	text, err := json.Marshal(strings.Repeat("the quick brown fox jumps over the lazy dog. ", 5<<20/45))
	if err != nil {
		b.Fatal(err)
	}
	st := sessionState{Version: StateVersion, Session: "s", History: historyState{data: []byte(`{"messages":[{"content":` + string(text) + `}]}`)}}
	var spliced, whole time.Duration
	for b.Loop() {
		for k, encode := range []func(sessionState) ([]byte, error){encodeState, func(s sessionState) ([]byte, error) { return encodeJSON(s) }} {
			start := time.Now()
			if _, err := encode(st); err != nil {
				b.Fatal(err)
			}
			if k == 0 {
				spliced += time.Since(start)
			} else {
				whole += time.Since(start)
			}
		}
	}
	b.ReportMetric(spliced.Seconds()/whole.Seconds(), "x-encodeJSON")
}
