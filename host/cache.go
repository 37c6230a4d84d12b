package host

import "github.com/ctxhost/ctxhost/sdk"

// CacheReport is what one prepared context costs with prompt caching, and
// what the unmanaged history (every message, nothing compacted, no window)
// would have cost at the same turn.
type CacheReport struct {
	Pricing sdk.Pricing
	// Managed is this payload: its prefix shared with the previous payload
	// of the same session and agent, split into cache read / write /
	// uncached tokens, and its cost units.
	Managed sdk.CacheCost
	// PrefixKept: this payload starts with the whole previous one except
	// its final message (context and input), so the provider's cache hits.
	PrefixKept bool
	// Unmanaged is the same turn with the whole history appended as is.
	Unmanaged sdk.CacheCost
	// UnmanagedFits: the unmanaged history would fit the available budget.
	UnmanagedFits bool
}

// cacheUnit is one stable piece of a payload, in order: the request
// framing, each system-slot component, then each history message; the
// final message (context and input) is volatile and left out. A unit is
// the same as the previous payload's when its key and text are: comparing
// the strings the view shares with the last one costs no hashing.
type cacheUnit struct {
	key    string // component name, or message id ("" for the omission marker)
	text   string // component text or message content as shown
	tokens int
}

// cacheTrack is what the previous prepare of one agent looked like.
type cacheTrack struct {
	units          []cacheUnit
	system         int // how many of units are the framing and system part
	stable         int // tokens of units
	unmanagedTotal int // stable tokens of the unmanaged payload (system + every message)
}

// cacheReport measures the final components against the previous prepare
// for agent and remembers them for the next one.
func (s *Session) cacheReport(agent string, final []countedComponent, b sdk.Budget) *CacheReport {
	p := s.cfg.Pricing
	if p == nil {
		return nil
	}
	each, all := s.hist.ViewCounts()
	units, system := cacheUnits(final, b, each)
	stable, systemTokens := 0, 0
	for i, u := range units {
		stable += u.tokens
		if i < system {
			systemTokens += u.tokens
		}
	}
	unmanagedStable := systemTokens + all
	if s.caches == nil {
		s.caches = map[string]*cacheTrack{}
	}
	prev := s.caches[agent]
	shared, kept, unmanagedShared := 0, prev != nil, 0
	if prev != nil {
		for i, u := range prev.units {
			if i >= len(units) || units[i].key != u.key || units[i].text != u.text {
				kept = false
				break
			}
			shared += u.tokens
		}
		if sameUnits(prev.units[:prev.system], units[:system]) {
			unmanagedShared = prev.unmanagedTotal
		}
	}
	volatile := b.Used - stable
	r := &CacheReport{Pricing: *p, PrefixKept: kept,
		Managed:   p.Cost(b.Used, shared),
		Unmanaged: p.Cost(unmanagedStable+volatile, unmanagedShared)}
	r.UnmanagedFits = calibrate(r.Unmanaged.Total, s.usage.Calibration) <= b.Available
	s.caches[agent] = &cacheTrack{units: units, system: system, stable: stable, unmanagedTotal: unmanagedStable}
	return r
}

// cacheUnits splits the final components into stable units (see
// cacheUnit) and says how many lead the history; each holds the tokens of
// every message of the history view.
func cacheUnits(final []countedComponent, b sdk.Budget, each []int) ([]cacheUnit, int) {
	units := []cacheUnit{{key: "framing", tokens: b.Overhead}}
	var history []cacheUnit
	for _, c := range final {
		switch {
		case c.comp.Slot == sdk.SlotSystem:
			units = append(units, cacheUnit{key: c.comp.Name, text: c.comp.Text, tokens: c.tokens})
		case c.isHistory():
			for i, m := range c.comp.Messages {
				history = append(history, cacheUnit{key: m.ID, text: m.Content, tokens: each[i]})
			}
		}
	}
	return append(units, history...), len(units)
}

func sameUnits(a, b []cacheUnit) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i].key != b[i].key || a[i].text != b[i].text {
			return false
		}
	}
	return true
}
