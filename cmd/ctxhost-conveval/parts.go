package main

import (
	"fmt"
	"io"
	"sort"
	"strings"
	"text/tabwriter"

	"github.com/ctxhost/ctxhost/host/facts"
	"github.com/ctxhost/ctxhost/sdk"
)

// The parts of what ctxhost sends beyond the naive trimmer on the same
// call, by what each text that only ctxhost sent is. Their sum, less
// partDropped, is the difference in tokens, exactly: every text is
// counted as the stand-in counts it (four tokens of framing each).
const (
	partKept    = iota // messages sent whole that the naive trimmer left out
	partCut            // messages cut head and tail around a cut marker
	partMasked         // masked placeholders, each with its digest of facts
	partFacts          // the facts component
	partMarkers        // omission markers standing for omitted messages
	partOther          // any other text, and the tools and system text when they differ
	partDropped        // messages the naive trimmer sent that ctxhost did not (taken off)
	nParts
)

// partNames are the parts' column names.
var partNames = [nParts]string{"kept", "cut", "masked", "facts", "markers", "other", "-dropped"}

// omittedMarker is how an omission marker reads (history.OmittedMarker).
const omittedMarker = " earlier messages omitted for brevity]"

// accountParts adds to t the parts of what ctxhost's request q sent
// beyond naive's request nv on the same call, conv the caller's messages
// as rendered (a text of them sent as it is counts as kept).
func accountParts(t *tally, q, nv *sent, conv []string, c *counter) {
	// texts are matched without the white space around them (ctxhost
	// trims a system text's last newline)
	left := map[string][]string{} // naive's texts not yet matched, as sent
	for _, s := range nv.texts {
		k := strings.TrimSpace(s)
		left[k] = append(left[k], s)
	}
	whole := map[string]bool{}
	for _, s := range conv {
		whole[strings.TrimSpace(s)] = true
	}
	var p [nParts]int64
	for _, s := range q.texts {
		if k := strings.TrimSpace(s); len(left[k]) > 0 {
			left[k] = left[k][1:]
			continue
		}
		p[partOf(s, whole, c, &p)] += int64(c.one(s))
	}
	for _, ss := range left {
		p[partDropped] += int64(c.of(ss))
	}
	if !equal(q.extra, nv.extra) {
		p[partOther] += int64(c.of(q.extra) - c.of(nv.extra))
	}
	// what the texts' counts leave (a text split between parts, a text
	// matched but for white space): other
	sum := int64(0)
	for i, v := range p {
		if i != partDropped {
			sum += v
		}
	}
	p[partOther] += int64(q.tokens-nv.tokens) - (sum - p[partDropped])
	for i := range p {
		t.parts[i] += p[i]
	}
}

// partOf is the part a text only ctxhost sent belongs to. A text that
// holds the facts component after something else (a system text it was
// joined to) has that component's tokens moved to partFacts in p here.
func partOf(s string, whole map[string]bool, c *counter, p *[nParts]int64) int {
	if i := strings.Index(s, facts.Header); i > 0 {
		p[partFacts] += int64(c.one(s[i:]) - 4) // no framing of its own; the rounding goes to other
		s = s[:i]
	} else if i == 0 {
		return partFacts
	}
	switch {
	case whole[strings.TrimSpace(s)]:
		return partKept
	case strings.Contains(s, " tokens cut from message "):
		return partCut
	case sdk.IsMasked(s) || strings.Contains(s, " output "+sdk.MaskedMarker+": "):
		return partMasked
	case strings.HasPrefix(s, "[") && strings.Contains(s, omittedMarker):
		return partMarkers
	}
	return partOther
}

// printParts prints, for each shape and window (the endpoints together),
// the tokens ctxhost sent beyond the naive trimmer and what they were,
// the tune and heldout splits side by side.
func printParts(w io.Writer, res *results) {
	type row struct {
		shape  string
		window int
	}
	sums := map[row]map[string]*tally{}
	for k, t := range res.by {
		if k.method != "ctxhost" && k.method != "naive" {
			continue
		}
		r := row{k.shape, k.window}
		if sums[r] == nil {
			sums[r] = map[string]*tally{}
		}
		sk := k.split + " " + k.method
		if sums[r][sk] == nil {
			sums[r][sk] = &tally{}
		}
		add(sums[r][sk], t)
	}
	var rows []row
	for r := range sums {
		rows = append(rows, r)
	}
	sort.Slice(rows, func(i, j int) bool {
		if rows[i].shape != rows[j].shape {
			return rows[i].shape < rows[j].shape
		}
		return rows[i].window < rows[j].window
	})
	fmt.Fprintln(w, "tokens ctxhost sent beyond the naive trimmer, by part (every endpoint): tune | heldout")
	tw := tabwriter.NewWriter(w, 0, 0, 1, ' ', tabwriter.AlignRight)
	head := "naive\tbeyond\t" + strings.Join(partNames[:], "\t") + "\t"
	fmt.Fprintln(tw, "shape\twindow\t|\t"+head+"|\t"+head)
	for _, r := range rows {
		line := fmt.Sprintf("%s\t%d\t", r.shape, r.window)
		for _, split := range []string{"tune", "heldout"} {
			c, n := sums[r][split+" ctxhost"], sums[r][split+" naive"]
			if c == nil || n == nil {
				line += "|\t" + strings.Repeat("-\t", nParts+2)
				continue
			}
			line += fmt.Sprintf("|\t%d\t%+.1f%%\t", n.tokens, pctDiff(c.tokens, n.tokens))
			for i, v := range c.parts {
				if i == partDropped {
					v = -v
				}
				line += fmt.Sprintf("%d\t", v)
			}
		}
		fmt.Fprintln(tw, line)
	}
	_ = tw.Flush()
}

// pctDiff is a's difference from b in percent of b.
func pctDiff(a, b int64) float64 {
	if b == 0 {
		return 0
	}
	return 100 * float64(a-b) / float64(b)
}
