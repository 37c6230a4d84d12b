package tokenizer

import (
	"math/rand"
	"strings"
	"testing"
)

// TestSectionsAreAdditive: for both BPE encodings the count of a text is
// the sum of its sections' counts, on texts built to stress the split
// points (newline runs, spaces and tabs after newlines, punctuation,
// contractions, digits, non-Latin scripts, CRLF) and on random ones.
func TestSectionsAreAdditive(t *testing.T) {
	texts := []string{
		"", "\n", "a\nb", "a\n\nb", "a\n b", "a \nb", "a\n\tb", "x\r\ny", "x\n\r\ny",
		"func main() {\n\tfmt.Println(\"hi\")\n}\n", "it\n's\n're\nI'm\n'll", "1234\n5678\n90",
		"## Title\n- item one\n- item two\n\n```go\nx := 1\n```\n", "日本語\n中文\nfin", "emoji 🙂\n🙂 next",
		"trailing\n", "  lead\nspace  \n  \nend", "a\u00a0\nb\n\u00a0c", "punct\n!!!\n...\n?x", "'\n\n/Z", "!\n/a\n//b",
	}
	r := rand.New(rand.NewSource(7))
	alphabet := []string{"a", "Z", "é", "1", " ", "\t", "\n", "\n\n", "\r\n", "'s", "'", "!", ".", "-", "日", "🙂", "_", "/", "\u00a0"}
	for range 20000 {
		var b strings.Builder
		for range r.Intn(80) {
			b.WriteString(alphabet[r.Intn(len(alphabet))])
		}
		texts = append(texts, b.String())
	}
	for _, enc := range []string{CL100kBase, O200kBase} {
		c, err := Get(enc)
		if err != nil {
			t.Fatal(err)
		}
		if !Additive(c) {
			t.Fatalf("%s is not additive", enc)
		}
		for _, text := range texts {
			secs := Sections(text)
			if strings.Join(secs, "") != text {
				t.Fatalf("sections of %q do not join back: %q", text, secs)
			}
			sum := 0
			for _, s := range secs {
				sum += c.Count(s)
			}
			if want := c.Count(text); sum != want {
				t.Errorf("%s: %q counts %d, its sections %q %d", enc, text, want, secs, sum)
			}
		}
	}
	if a, _ := Get(Approximate); Additive(a) {
		t.Error("the approximate counter claims to be additive")
	}
}

// TestSectionsAreAdditiveOnTrajectories: the same on every message of the
// reference trajectories (code, diffs, tool outputs), and on all of them
// joined.
func TestSectionsAreAdditiveOnTrajectories(t *testing.T) {
	texts := trajectoryText(t)
	texts = append(texts, strings.Join(texts, "\n"))
	for _, enc := range []string{CL100kBase, O200kBase} {
		c, _ := Get(enc)
		for _, text := range texts {
			sum := 0
			for _, s := range Sections(text) {
				sum += c.Count(s)
			}
			if want := c.Count(text); sum != want {
				t.Errorf("%s: a %d-byte message counts %d, its sections %d", enc, len(text), want, sum)
			}
		}
	}
}
