package tokenizer

import (
	"encoding/json"
	"os"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/pkoukk/tiktoken-go"
	tiktokenloader "github.com/pkoukk/tiktoken-go-loader"

	"github.com/ctxhost/ctxhost/internal/shareddata"
)

func init() { tiktoken.SetBpeLoader(tiktokenloader.NewOfflineLoader()) }

// trajectoryText is every message of the reference trajectories, joined:
// real system prompts, code, diffs and tool outputs.
func trajectoryText(t testing.TB) []string {
	t.Helper()
	files := shareddata.RequireTrajectories(t)
	var out []string
	for _, f := range files {
		raw, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		var traj struct {
			History []struct {
				Content string `json:"content"`
			} `json:"history"`
		}
		if err := json.Unmarshal(raw, &traj); err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		for _, m := range traj.History {
			out = append(out, m.Content)
		}
	}
	return out
}

func rawEncoder(t testing.TB, enc string) *tiktoken.Tiktoken {
	t.Helper()
	raw, err := tiktoken.GetEncoding(enc)
	if err != nil {
		t.Fatal(err)
	}
	return raw
}

// TestMatchesTiktokenGo compares every trajectory message with
// pkoukk/tiktoken-go, id for id.
func TestMatchesTiktokenGo(t *testing.T) {
	texts := trajectoryText(t)
	texts = append(texts, "<|endoftext", "a<|endofprompt|>b", strings.Repeat("=", 400), "  \n\n\t x")
	for _, enc := range []string{CL100kBase, O200kBase} {
		c, _ := Get(enc)
		raw := rawEncoder(t, enc)
		for i, text := range texts {
			if diff := cmp.Diff(raw.Encode(text, []string{"all"}, nil), c.Encode(text)); diff != "" {
				t.Errorf("%s text %d %.40q (-tiktoken-go +ours):\n%s", enc, i, text, diff)
			}
		}
	}
}
