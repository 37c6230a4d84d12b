package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/ctxhost/ctxhost/sdk"
)

// TestRecordStreamMatchesWholeRecord: the streamed record is byte for byte
// what encoding the whole runRecord at once gives, with no turn, one turn
// and several, with and without the cache summary.
func TestRecordStreamMatchesWholeRecord(t *testing.T) {
	turn := func(n int) turnRecord {
		sys := "a <b> & \"c\"\n"
		return turnRecord{Turn: n, Line: 10 * n, Agent: "max", Budget: &sdk.Budget{Used: n, Available: 100}, Fits: true,
			Components: []componentRecord{{Name: "history", Tokens: n}}, Warnings: []string{"w <1>"}, System: &sys,
			MediaType: "application/json", Payload: json.RawMessage(`{"a": [1, 2, {"b": "<x>"}]}`)}
	}
	for _, tc := range []struct {
		turns int
		cache *cacheSummary
	}{{0, nil}, {1, nil}, {3, nil}, {2, &cacheSummary{UnmanagedOver: 1}}, {0, &cacheSummary{}}} {
		t.Run(fmt.Sprintf("%d turns cache %v", tc.turns, tc.cache != nil), func(t *testing.T) {
			whole := runRecord{Transcript: "run <1>.jsonl", Format: "jsonl", Context: "coding", Turns: []turnRecord{}, Cache: tc.cache}
			var got bytes.Buffer
			s, err := newRecordStream(&got, whole.Transcript, whole.Format, whole.Context)
			if err != nil {
				t.Fatal(err)
			}
			for i := 1; i <= tc.turns; i++ {
				whole.Turns = append(whole.Turns, turn(i))
				if err := s.turn(turn(i)); err != nil {
					t.Fatal(err)
				}
			}
			if err := s.close(tc.cache); err != nil {
				t.Fatal(err)
			}
			var want bytes.Buffer
			enc := json.NewEncoder(&want)
			enc.SetIndent("", "  ")
			if err := enc.Encode(whole); err != nil {
				t.Fatal(err)
			}
			if got.String() != want.String() {
				t.Errorf("streamed record differs from the whole one\n got:\n%s\nwant:\n%s", got.String(), want.String())
			}
		})
	}
}

// turnProbe is the stdout of an in-process run: it counts the turn records
// written and measures the live heap each time one arrives. What it is
// given goes to a file, so the test itself holds no turn in memory.
type turnProbe struct {
	out io.Writer
	// marker is what starts a turn in the output.
	marker []byte
	// turnWrites counts writes holding one turn record each; a write with
	// more than one is counted in batched.
	turnWrites, batched int
	heap                []uint64
}

func (p *turnProbe) Write(b []byte) (int, error) {
	if n := bytes.Count(b, p.marker); n == 1 {
		p.turnWrites++
		runtime.GC()
		var ms runtime.MemStats
		runtime.ReadMemStats(&ms)
		p.heap = append(p.heap, ms.HeapAlloc)
	} else if n > 1 {
		p.batched++
	}
	return p.out.Write(b)
}

// TestRunStreamsTurns: run writes each turn as the turn is prepared, in a
// write of its own (json: the turn's record; text: its header line), and
// the live heap does not grow with the turns already written (each turn
// carries a 32 KB payload, which a run keeping its turns would hold 180
// times over between the 20th and the 200th turn).
func TestRunStreamsTurns(t *testing.T) {
	if testing.Short() {
		t.Skip("slow: make test runs it, make test-short (-short) leaves it out")
	}
	dir := t.TempDir()
	config := filepath.Join(dir, "run.hcl")
	if err := os.WriteFile(config, []byte(`
model "big" {
  context_window        = 200000
  reserved_for_response = 1000
}
context "plain" {
  model = "big"
}
`), 0o644); err != nil {
		t.Fatal(err)
	}
	const turns, payloadBytes = 200, 32 << 10
	system := strings.Repeat("word ", payloadBytes/5)
	var tr strings.Builder
	fmt.Fprintf(&tr, "{\"type\": \"system\", \"text\": %q}\n", system)
	tr.WriteString(`{"type": "message", "role": "user", "content": "hello"}` + "\n")
	for range turns {
		tr.WriteString(`{"type": "prepare"}` + "\n")
	}
	transcriptFile := filepath.Join(dir, "run.jsonl")
	if err := os.WriteFile(transcriptFile, []byte(tr.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, format := range []string{"json", "text"} {
		t.Run(format, func(t *testing.T) {
			outFile, err := os.Create(filepath.Join(dir, "out."+format))
			if err != nil {
				t.Fatal(err)
			}
			defer outFile.Close()
			probe := turnProbe{out: outFile, marker: []byte(`"turn": `)}
			if format == "text" {
				probe.marker = []byte(" (line ")
			}
			args := []string{"-config", config, "-format", format, transcriptFile}
			if err := cmdRun(args, stdio{in: strings.NewReader(""), out: &probe, err: io.Discard}); err != nil {
				t.Fatal(err)
			}
			if probe.turnWrites != turns || probe.batched != 0 {
				t.Fatalf("%d writes of one turn and %d of several, want %d and 0 (every turn written as it is prepared)",
					probe.turnWrites, probe.batched, turns)
			}
			early, late := probe.heap[19], probe.heap[turns-1]
			if grown := int64(late) - int64(early); grown > 20*payloadBytes {
				t.Errorf("live heap grew %d bytes from turn 20 to turn %d (%.1f payloads), want flat (under 20 payloads)",
					grown, turns, float64(grown)/payloadBytes)
			}
			t.Logf("live heap at turn 20: %d bytes, at turn %d: %d bytes", early, turns, late)
			if format != "json" {
				return
			}
			written, err := os.ReadFile(outFile.Name())
			if err != nil {
				t.Fatal(err)
			}
			var rec runRecord
			if err := json.Unmarshal(written, &rec); err != nil {
				t.Fatalf("streamed record is not one JSON document: %v", err)
			}
			if len(rec.Turns) != turns || rec.Turns[0].Turn != 1 || rec.Turns[turns-1].Turn != turns {
				t.Fatalf("record has %d turns, want %d numbered 1..%d", len(rec.Turns), turns, turns)
			}
			if len(rec.Turns[turns-1].Payload) < payloadBytes {
				t.Fatalf("last payload is %d bytes, want at least %d", len(rec.Turns[turns-1].Payload), payloadBytes)
			}
		})
	}
}
