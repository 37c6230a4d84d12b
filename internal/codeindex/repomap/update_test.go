package repomap

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ctxhost/ctxhost/internal/codeindex"
	"github.com/ctxhost/ctxhost/internal/codeindex/codeindextest"
)

const pricingWithDiscount = `TAX_RATE = 0.2


def compute_total(items):
    return sum(apply_tax(i["price"]) for i in items)


def apply_discount(price):
    return price * TAX_RATE


def apply_tax(price):
    return price * (1 + TAX_RATE)
`

// TestUpdatePatchesAChangedFile: a function added to a file (its
// references unchanged) is in the patched graph, whose map is the map of
// the graph built again; the previous graph is left as it was.
func TestUpdatePatchesAChangedFile(t *testing.T) {
	root := codeindextest.WriteRepo(t, codeindextest.SampleRepo)
	ix := indexRepo(t, root)
	g := Build(ix.Files())
	if err := os.WriteFile(filepath.Join(root, "shop", "pricing.py"), []byte(pricingWithDiscount), 0o644); err != nil {
		t.Fatal(err)
	}
	ch, err := ix.RefreshFiles([]string{"shop/pricing.py"})
	if err != nil || len(ch.Changed) != 1 {
		t.Fatalf("refresh: %+v %v", ch, err)
	}
	patched, complete := g.Update(ix.Files(), ch)
	if complete {
		t.Fatal("one changed file was not patched")
	}
	if !patched.Defines("shop/pricing.py", "apply_discount") || g.Defines("shop/pricing.py", "apply_discount") {
		t.Fatal("the patched graph lacks the new function, or the previous graph has it")
	}
	full := Build(ix.Files())
	for _, text := range []string{"apply_discount takes too much", "the tax is applied twice", ""} {
		want := full.Rank(Focus{Text: text}).Render(RenderOptions{MaxDefs: -1}).Text
		got := patched.Rank(Focus{Text: text}).Render(RenderOptions{MaxDefs: -1}).Text
		if got != want {
			t.Errorf("task %q: patched map\n%s\nwant (built again)\n%s", text, got, want)
		}
	}
	if m := g.Rank(Focus{Text: "apply_discount"}).Render(RenderOptions{MaxDefs: -1}); strings.Contains(m.Text, "apply_discount") {
		t.Error("the previous graph's map shows the new function")
	}
	// a removed definition leaves the patched graph
	if err := os.WriteFile(filepath.Join(root, "shop", "pricing.py"), []byte("TAX_RATE = 0.2\n\n\ndef compute_total(items):\n    return sum(apply_tax(i[\"price\"]) for i in items)\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	ch, _ = ix.RefreshFiles([]string{"shop/pricing.py"})
	again, _ := patched.Update(ix.Files(), ch)
	if again.Defines("shop/pricing.py", "apply_tax") || again.Defines("shop/pricing.py", "apply_discount") {
		t.Error("removed definitions are still in the patched graph")
	}
	if m := again.Rank(Focus{Text: "apply_tax"}).Render(RenderOptions{MaxDefs: -1}); strings.Contains(m.Text, "def apply_tax") {
		t.Errorf("the map shows a removed function:\n%s", m.Text)
	}
}

// TestFollowHandsOverTheCompleteGraph: after a change the followed graph
// is patched at once, then replaced by the one built again.
func TestFollowHandsOverTheCompleteGraph(t *testing.T) {
	root := codeindextest.WriteRepo(t, codeindextest.SampleRepo)
	live, err := codeindex.NewLive(root, 0)
	if err != nil {
		t.Fatal(err)
	}
	d := Follow(live)
	ctx := context.Background()
	first, err := d.Current(ctx, false)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(root, "shop", "pricing.py"), []byte(pricingWithDiscount), 0o644); err != nil {
		t.Fatal(err)
	}
	patched, err := d.Current(ctx, true)
	if err != nil || patched == first || !patched.Defines("shop/pricing.py", "apply_discount") {
		t.Fatalf("after the change: %v, new graph %v", err, patched != first)
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		g, err := d.Current(ctx, false)
		if err != nil {
			t.Fatal(err)
		}
		if g != patched {
			if !g.Defines("shop/pricing.py", "apply_discount") || g.extra != nil {
				t.Error("the graph that replaced the patched one is not the complete graph of the files")
			}
			return
		}
		if time.Now().After(deadline) {
			t.Fatal("the complete graph never replaced the patched one")
		}
		time.Sleep(10 * time.Millisecond)
	}
}
