package host

import (
	"github.com/ctxhost/ctxhost/host/history"
	"github.com/ctxhost/ctxhost/sdk"
)

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

// cacheTrack is what the previous prepare of one agent looked like: its
// units are system, then one per message of history.
type cacheTrack struct {
	system         []cacheUnit   // the framing and the system-slot components
	history        []sdk.Message // the history view (shared, read-only)
	each           []int         // the tokens of each message of history
	epoch          uint64        // the view's epoch (history.Shared); 0: unknown
	historyTokens  int           // the sum of each
	stable         int           // tokens of every unit
	unmanagedTotal int           // stable tokens of the unmanaged payload (system + every message)
}

// len is the number of units.
func (t *cacheTrack) len() int { return len(t.system) + len(t.history) }

// unit is the i-th unit.
func (t *cacheTrack) unit(i int) cacheUnit {
	if i < len(t.system) {
		return t.system[i]
	}
	i -= len(t.system)
	return cacheUnit{key: t.history[i].ID, text: t.history[i].Content, tokens: t.each[i]}
}

// cacheReport measures the final components against the previous prepare
// for agent and remembers them for the next one; when the unmanaged
// history would not have fitted the available budget, the session's
// context has outgrown it (StrategyInput.Outgrown). A turn that only
// appended to the history compares the system units and takes the
// history's shared part whole (the view's epoch says it is unchanged), so
// its cost does not grow with the history.
func (t *turn) cacheReport(agent string, final []countedComponent, b sdk.Budget) *CacheReport {
	s := t.s
	p := s.cfg.Pricing
	if p == nil {
		return nil
	}
	cur := cacheTrackOf(s.hist, final, b)
	if s.caches == nil {
		s.caches = map[string]*cacheTrack{}
	}
	prev := s.caches[agent]
	shared, kept, unmanagedShared := 0, prev != nil, 0
	if prev != nil {
		shared, kept = sharedPrefix(prev, cur)
		if sameUnits(prev.system, cur.system) {
			unmanagedShared = prev.unmanagedTotal
		}
	}
	volatile := b.Used - cur.stable
	r := &CacheReport{Pricing: *p, PrefixKept: kept,
		Managed:   p.Cost(b.Used, shared),
		Unmanaged: p.Cost(cur.unmanagedTotal+volatile, unmanagedShared)}
	r.UnmanagedFits = calibrate(r.Unmanaged.Total, s.usage.Calibration) <= b.Available
	s.pressure.Credit += r.Unmanaged.Cost - r.Managed.Cost
	if !r.UnmanagedFits {
		// The run is no longer one whose history fits: the strategy is
		// held to the unmanaged cost no more (see cacheAware).
		s.pressure.Outgrown = true
	}
	s.caches[agent] = cur
	return r
}

// cacheTrackOf splits the final components into stable units (see
// cacheUnit): the system part, then the history view with the counts the
// history keeps for it.
func cacheTrackOf(h *history.History, final []countedComponent, b sdk.Budget) *cacheTrack {
	v := h.Shared()
	t := &cacheTrack{system: []cacheUnit{{key: "framing", tokens: b.Overhead}}}
	for _, c := range final {
		switch {
		case c.comp.Slot == sdk.SlotSystem:
			t.system = append(t.system, cacheUnit{key: c.comp.Name, text: c.comp.Text, tokens: c.tokens})
		case c.isHistory():
			t.history, t.each = c.comp.Messages, v.Tokens
			if sameSlice(c.comp.Messages, v.Messages) {
				t.epoch, t.historyTokens = v.Epoch, v.Total
			} else {
				for _, n := range t.each[:len(t.history)] {
					t.historyTokens += n
				}
			}
		}
	}
	systemTokens := 0
	for _, u := range t.system {
		systemTokens += u.tokens
	}
	t.stable = systemTokens + t.historyTokens
	t.unmanagedTotal = systemTokens + v.Unmanaged
	return t
}

// sharedPrefix returns the tokens of prev's units that cur repeats in
// order, and whether cur repeats all of them (the prefix is kept).
func sharedPrefix(prev, cur *cacheTrack) (int, bool) {
	if sameUnits(prev.system, cur.system) && prev.epoch != 0 && prev.epoch == cur.epoch && len(prev.history) <= len(cur.history) {
		// Only appended since: the view of one epoch agrees on every message.
		return prev.stable, true
	}
	shared := 0
	for i := range prev.len() {
		u := prev.unit(i)
		if i >= cur.len() {
			return shared, false
		}
		if c := cur.unit(i); c.key != u.key || c.text != u.text {
			return shared, false
		}
		shared += u.tokens
	}
	return shared, true
}

// sameSlice reports whether a and b are the same slice of one array.
func sameSlice(a, b []sdk.Message) bool {
	return len(a) == len(b) && (len(a) == 0 || &a[0] == &b[0])
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
