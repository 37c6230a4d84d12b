package proxybench

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
)

// TestBigAnswer checks the large streamed answer is a valid Chat
// Completions stream of at least BigAnswerBytes of text in deltas of at
// most BigDeltaBytes on the wire, and that the Go proxy relays it whole.
func TestBigAnswer(t *testing.T) {
	answer := bigAnswer(BigAnswerBytes, BigDeltaBytes)
	got, err := relay(goProxy(t, bigUpstream(t, answer)))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, answer) {
		t.Fatalf("the proxy relayed %d bytes of %d", len(got), len(answer))
	}
	var text strings.Builder
	events := strings.Split(strings.TrimSuffix(string(answer), "\n\n"), "\n\n")
	if events[len(events)-1] != "data: [DONE]" {
		t.Fatalf("last event %q", events[len(events)-1])
	}
	for _, e := range events[:len(events)-1] {
		data, ok := strings.CutPrefix(e, "data: ")
		if !ok {
			t.Fatalf("event %.80q", e)
		}
		var chunk struct {
			Choices []struct {
				Delta struct {
					Content string `json:"content"`
				} `json:"delta"`
			} `json:"choices"`
		}
		if err := json.Unmarshal([]byte(data), &chunk); err != nil {
			t.Fatalf("event %.80q: %v", e, err)
		}
		for _, c := range chunk.Choices {
			if len(c.Delta.Content) > BigDeltaBytes {
				t.Fatalf("a delta of %d bytes", len(c.Delta.Content))
			}
			text.WriteString(c.Delta.Content)
		}
	}
	if text.Len() < BigAnswerBytes*9/10 || !strings.Contains(text.String(), `the "quick" brown fox`) {
		t.Fatalf("the answer's text has %d bytes", text.Len())
	}
}

func relay(base string) ([]byte, error) {
	res, err := http.Post(base+"/v1/chat/completions", "application/json", strings.NewReader(`{"stream":true}`))
	if err != nil {
		return nil, err
	}
	defer res.Body.Close()
	return io.ReadAll(res.Body)
}

// TestNginxRelays checks the benchmark's nginx configuration relays a
// stream whole (skipped where nginx is not installed).
func TestNginxRelays(t *testing.T) {
	answer := bigAnswer(256<<10, BigDeltaBytes)
	urls, skipped := startNginx(t, bigUpstream(t, answer))
	if skipped != "" {
		t.Skip(skipped)
	}
	for range 2 { // the second over a kept-alive upstream connection
		got, err := relay(urls[0])
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, answer) {
			t.Fatalf("nginx relayed %d bytes of %d", len(got), len(answer))
		}
	}
}
