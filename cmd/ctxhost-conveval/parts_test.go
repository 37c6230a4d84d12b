package main

import (
	"strings"
	"testing"

	"github.com/ctxhost/ctxhost/host/facts"
	"github.com/ctxhost/ctxhost/host/history"
	"github.com/ctxhost/ctxhost/sdk"
)

// TestPartsAddUpToTheDifference: what ctxhost sent beyond the naive
// trimmer is told apart by part (a message naive left out, a cut one, a
// masked placeholder, the facts component, the omission marker, a text of
// neither), a message naive sent that ctxhost did not is taken off (a
// text sent by both but for its last newline is the same message, its
// newline's token other), and the parts add up to the difference in
// tokens exactly.
func TestPartsAddUpToTheDifference(t *testing.T) {
	c := newCounter()
	task, old, recent := "TASK-ID: x.\nfind order W1234", strings.Repeat("old output ", 50), "latest question about W1234"
	masked := sdk.MaskedPlaceholder(sdk.MaskInfo{Tool: "lookup", Output: old, ID: "m3"}) + " facts: W1234"
	cut := "head of it" + history.CutMarker(300, "m4") + "tail of it"
	marker := "[3 earlier messages omitted for brevity]"
	factsText := facts.Header + "\n- m2: W1234"
	system := "be brief\n"
	q := &sent{texts: []string{strings.TrimSpace(system), task, marker, masked, cut, "something else", recent, factsText}, extra: []string{"tools"}}
	nv := &sent{texts: []string{system, old, recent}, extra: []string{"tools"}}
	q.tokens = c.of(q.texts) + c.of(q.extra) + 3
	nv.tokens = c.of(nv.texts) + c.of(nv.extra) + 3
	var tl tally
	accountParts(&tl, q, nv, []string{system, task, old, "m4's whole text", recent}, c)
	want := [nParts]int64{partKept: int64(c.one(task)), partCut: int64(c.one(cut)), partMasked: int64(c.one(masked)),
		partFacts: int64(c.one(factsText)), partMarkers: int64(c.one(marker)), partOther: int64(c.one("something else") - (c.one(system) - c.one(strings.TrimSpace(system)))), partDropped: int64(c.one(old))}
	if tl.parts != want {
		t.Errorf("parts %v, want %v", tl.parts, want)
	}
	sum := -tl.parts[partDropped]
	for _, v := range tl.parts[:partDropped] {
		sum += v
	}
	if sum != int64(q.tokens-nv.tokens) {
		t.Errorf("the parts add up to %d, the difference is %d", sum, q.tokens-nv.tokens)
	}
}
