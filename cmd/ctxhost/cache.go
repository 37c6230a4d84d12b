package main

import (
	"fmt"
	"io"
	"math"

	"github.com/ctxhost/ctxhost/engine"
	"github.com/ctxhost/ctxhost/sdk"
)

// cacheRecord is a turn's cost with prompt caching, in run -format json.
type cacheRecord struct {
	Managed       sdk.CacheCost `json:"managed"`
	PrefixKept    bool          `json:"prefix_kept"`
	Unmanaged     sdk.CacheCost `json:"unmanaged"`
	UnmanagedFits bool          `json:"unmanaged_fits"`
}

func newCacheRecord(c *engine.CacheReport) *cacheRecord {
	if c == nil {
		return nil
	}
	return &cacheRecord{Managed: c.Managed, PrefixKept: c.PrefixKept, Unmanaged: c.Unmanaged, UnmanagedFits: c.UnmanagedFits}
}

// cacheTotals sums one side (managed or unmanaged) over a run.
type cacheTotals struct {
	Input  int     `json:"input_tokens"`
	Read   int     `json:"cache_read_tokens"`
	Cost   float64 `json:"cost_units"`
	Kept   int     `json:"turns_prefix_kept"`
	Turns  int     `json:"turns"`
	Cached float64 `json:"cached_share"`
}

func (t *cacheTotals) add(c sdk.CacheCost, kept bool) {
	t.Input += c.Total
	t.Read += c.Read
	t.Cost += c.Cost
	t.Turns++
	if kept {
		t.Kept++
	}
	t.Cached = float64(t.Read) / float64(max(t.Input, 1))
}

// cacheSummary is the end-of-run comparison of the managed context with
// the unmanaged history replayed in the same run.
type cacheSummary struct {
	Pricing   sdk.Pricing `json:"pricing"`
	Managed   cacheTotals `json:"managed"`
	Unmanaged cacheTotals `json:"unmanaged"`
	// UnmanagedOver counts the turns the unmanaged history would not have
	// fitted the window (its figures are then for an unlimited window).
	UnmanagedOver int `json:"unmanaged_over_window"`
}

// add counts one turn (nil: the turn had no cache report).
func (s *cacheSummary) add(c *engine.CacheReport) {
	if c == nil {
		return
	}
	s.Pricing = c.Pricing
	s.Managed.add(c.Managed, c.PrefixKept)
	s.Unmanaged.add(c.Unmanaged, true)
	if !c.UnmanagedFits {
		s.UnmanagedOver++
	}
}

// printCache prints a turn's cache line.
func printCache(w io.Writer, c *engine.CacheReport) {
	if c == nil {
		return
	}
	kept := "prefix changed"
	if c.PrefixKept {
		kept = "prefix kept"
	}
	m := c.Managed
	short := ""
	if m.SharedPrefix > 0 && m.Read == 0 && m.SharedPrefix < c.Pricing.MinCacheable {
		short = fmt.Sprintf(" (below the provider's %s-token minimum)", thousands(c.Pricing.MinCacheable))
	}
	fmt.Fprintf(w, "  cache: %s, %s of %s tok shared%s; read %s, write %s, uncached %s: %s units (unmanaged %s)\n",
		kept, thousands(m.SharedPrefix), thousands(m.Total), short, thousands(m.Read), thousands(m.Write), thousands(m.Uncached),
		thousands(int(math.Round(m.Cost))), thousands(int(math.Round(c.Unmanaged.Cost))))
}

// print writes the summary table.
func (s *cacheSummary) print(w io.Writer) {
	if s.Managed.Turns == 0 {
		return
	}
	p := s.Pricing
	write := "no write premium"
	if p.CacheWrite > 0 {
		write = fmt.Sprintf("write %.2fx", p.CacheWrite)
	}
	fmt.Fprintf(w, "\n--- prompt caching (cache read %.2fx, %s, from %d tokens; 1 unit = 1 uncached input token) ---\n",
		p.CacheRead, write, p.MinCacheable)
	fmt.Fprintf(w, "  %-10s %12s %8s %12s %14s\n", "", "input tok", "cached", "cost units", "prefix kept")
	row := func(name string, t cacheTotals, note string) {
		fmt.Fprintf(w, "  %-10s %12s %7.0f%% %12s %14s%s\n", name, thousands(t.Input), 100*t.Cached,
			thousands(int(t.Cost+0.5)), fmt.Sprintf("%d/%d turns", t.Kept, t.Turns), note)
	}
	row("managed", s.Managed, "")
	note := ""
	if s.UnmanagedOver > 0 {
		note = fmt.Sprintf("  (over the window on %d turns: figures for an unlimited window)", s.UnmanagedOver)
	}
	row("unmanaged", s.Unmanaged, note)
	if s.Unmanaged.Cost > 0 {
		fmt.Fprintf(w, "  managed / unmanaged cost: %.2fx\n", s.Managed.Cost/s.Unmanaged.Cost)
	}
}
