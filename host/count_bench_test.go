package host

import (
	"fmt"
	"strings"
	"testing"

	"github.com/ctxhost/ctxhost/sdk"
	"github.com/ctxhost/ctxhost/tokenizer"
)

// BenchmarkCountChangedComponent: the host's count of a plugin component
// of N tool outputs (about 400 bytes each, one section apiece) after one
// output changed, for N = 150 and 600: "whole" counts the whole text
// again (what a change cost before), "pieces" is countComponent with the
// last answer's counts. Ratios within one run: 600/150 for each, and
// pieces/whole.
func BenchmarkCountChangedComponent(b *testing.B) {
	counter, err := tokenizer.Get(tokenizer.CL100kBase)
	if err != nil {
		b.Fatal(err)
	}
	output := func(i, turn int) string {
		return fmt.Sprintf("[%d] bash: go test ./... (exit %d)\n%s\n", i, turn%2, strings.Repeat(fmt.Sprintf("ok  \tgithub.com/example/pkg%d\t0.%03ds\n", i, i%997), 8))
	}
	text := func(n, turn int) string {
		var sb strings.Builder
		for i := range n {
			t := 0
			if i == n-1 {
				t = turn
			}
			sb.WriteString(output(i, t))
		}
		return sb.String()
	}
	for _, n := range []int{150, 600} {
		// The plugin's answer alternates between two texts that differ in
		// their last output (built before the clock starts).
		texts := [2]string{text(n, 0), text(n, 1)}
		b.Run(fmt.Sprintf("whole/%d", n), func(b *testing.B) {
			turn := 0
			for b.Loop() {
				turn++
				counter.Count(texts[turn%2])
			}
		})
		b.Run(fmt.Sprintf("pieces/%d", n), func(b *testing.B) {
			_, counts := countComponent(counter, &sdk.Component{Text: texts[0]}, nil)
			turn := 0
			for b.Loop() {
				turn++
				_, counts = countComponent(counter, &sdk.Component{Text: texts[turn%2]}, counts)
			}
		})
	}
}

// TestCountComponentIsExact: counting piece by piece, with or without the
// last answer's counts, gives the count of the whole.
func TestCountComponentIsExact(t *testing.T) {
	for _, enc := range []string{tokenizer.CL100kBase, tokenizer.O200kBase, tokenizer.Approximate} {
		counter, err := tokenizer.Get(enc)
		if err != nil {
			t.Fatal(err)
		}
		a := "## Plan\n- [x] reproduce\n- [ ] patch\n\nNotes:\n  indented\n/slash start\n"
		b := strings.Replace(a, "patch", "patch the lexer", 1) + "tail without newline"
		_, counts := countComponent(counter, &sdk.Component{Text: a}, nil)
		for _, text := range []string{a, b, ""} {
			got, next := countComponent(counter, &sdk.Component{Text: text}, counts)
			if want := counter.Count(text); got != want {
				t.Errorf("%s: %q counts %d piece by piece, %d whole", enc, text, got, want)
			}
			counts = next
		}
		msgs := &sdk.Component{Messages: []sdk.Message{{Role: "user", Content: "hi"}, {Role: "assistant", Content: "hi"}}}
		want := 2 * counter.Count(sdk.MessageText(msgs.Messages[0]))
		if got, _ := countComponent(counter, msgs, nil); got != want && enc != tokenizer.Approximate {
			t.Errorf("%s: messages count %d, want %d", enc, got, want)
		}
	}
}
