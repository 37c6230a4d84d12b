package host

import (
	"slices"
	"strings"

	"github.com/cespare/xxhash/v2"

	"github.com/ctxhost/ctxhost/host/history"
	"github.com/ctxhost/ctxhost/sdk"
)

// cacheUnit is one stable piece of a payload, in order: the request
// framing, each system-slot component, then each history message; the
// final message (context and input) is volatile and left out. A unit is
// the same as the previous payload's when its key and text are: comparing
// the strings the view shares with the last one costs no hashing. A
// system unit is compared by a digest of its text (sum), which a session
// saves (savedTrack).
type cacheUnit struct {
	key    string // component name, or message id ("" for the omission marker)
	text   string // message content as shown (history units)
	sum    uint64 // the digest of a system unit's text
	tokens int
}

// savedTrack is what a session saves of an agent's last cacheTrack, so
// that a session opened again from its store weighs its next turn as the
// live one would: the system units, how many messages of the history's
// view the payload held, and its totals. It is saved only while the view
// has changed by appends alone since that payload, when those messages
// are the first of the view restored with the session; otherwise the live
// session does not compare with that payload either (cacheReport).
type savedTrack struct {
	Agent          string      `json:"agent"`
	System         []savedUnit `json:"system"`
	Messages       int         `json:"messages"`
	HistoryTokens  int         `json:"history_tokens"`
	Stable         int         `json:"stable"`
	UnmanagedTotal int         `json:"unmanaged_total"`
}

// savedUnit is a saved system unit.
type savedUnit struct {
	Key    string `json:"key"`
	Sum    uint64 `json:"sum"`
	Tokens int    `json:"tokens"`
}

// saved is t as a session saves it, for agent; ok is false when t is not
// of the session's view (an agent's own view), which is not saved.
func (t *cacheTrack) saved(agent string) (savedTrack, bool) {
	if t.epoch == 0 {
		return savedTrack{}, false
	}
	st := savedTrack{Agent: agent, Messages: len(t.history), HistoryTokens: t.historyTokens, Stable: t.stable, UnmanagedTotal: t.unmanagedTotal}
	for _, u := range t.system {
		st.System = append(st.System, savedUnit{Key: u.key, Sum: u.sum, Tokens: u.tokens})
	}
	return st, true
}

// savedTracks is what the session saves of its agents' last payloads:
// those made of the view as it is (changed by appends alone since).
func (p *Planning) savedTracks() []savedTrack {
	if len(p.caches) == 0 {
		return nil
	}
	epoch := p.conv.hist.Epoch()
	var out []savedTrack
	for agent, t := range p.caches {
		if t.epoch != epoch {
			continue
		}
		if st, ok := t.saved(agent); ok {
			out = append(out, st)
		}
	}
	slices.SortFunc(out, func(a, b savedTrack) int { return strings.Compare(a.Agent, b.Agent) })
	return out
}

// pressureToSave is the pressure state as the session saves it, with its
// agents' last payloads (savedTracks).
func (p *Planning) pressureToSave() pressureState {
	ps := p.pressure
	ps.Tracks = p.savedTracks()
	return ps
}

// restoreTracks rebuilds the agents' last payloads from what the session
// saved of them and its restored view.
func (p *Planning) restoreTracks(saved []savedTrack) {
	p.caches = nil
	if len(saved) == 0 {
		return
	}
	v := p.conv.hist.Shared()
	p.caches = map[string]*cacheTrack{}
	for _, st := range saved {
		if st.Messages > len(v.Messages) {
			continue
		}
		t := &cacheTrack{history: v.Messages[:st.Messages:st.Messages], each: v.Tokens[:st.Messages:st.Messages], epoch: v.Epoch,
			historyTokens: st.HistoryTokens, stable: st.Stable, unmanagedTotal: st.UnmanagedTotal}
		for _, u := range st.System {
			t.system = append(t.system, cacheUnit{key: u.Key, sum: u.Sum, tokens: u.Tokens})
		}
		p.caches[st.Agent] = t
	}
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
// for agent (of a turn begun at the history view's startEpoch, whose
// summaries cost summaries) and remembers them for the next one; when
// the unmanaged history would not have fitted the available budget, the
// session's context has outgrown it (StrategyInput.Outgrown). A turn that only
// appended to the history compares the system units and takes the
// history's shared part whole (the view's epoch says it is unchanged), so
// its cost does not grow with the history.
func (p *Planning) cacheReport(agent string, final []countedComponent, b sdk.Budget, startEpoch uint64, summaries float64) *CacheReport {
	pr := p.cfg.Pricing
	if pr == nil {
		return nil
	}
	cur := cacheTrackOf(p.conv.hist, final, b)
	if p.caches == nil {
		p.caches = map[string]*cacheTrack{}
	}
	prev := p.caches[agent]
	if prev != nil && prev.epoch != 0 && prev.epoch != startEpoch {
		// The view changed other than by appends since that payload: a
		// session opened again from its store would not know it.
		prev = nil
	}
	shared, kept, unmanagedShared := 0, prev != nil, 0
	if prev != nil {
		shared, kept = sharedPrefix(prev, cur)
		if sameUnits(prev.system, cur.system) {
			unmanagedShared = prev.unmanagedTotal
		}
	}
	volatile := b.Used - cur.stable
	r := &CacheReport{Pricing: *pr, PrefixKept: kept,
		Managed:   pr.Cost(b.Used, shared),
		Unmanaged: pr.Cost(cur.unmanagedTotal+volatile, unmanagedShared)}
	r.UnmanagedFits = calibrate(r.Unmanaged.Total, p.usage.Calibration) <= b.Available
	r.Summaries = summaries
	p.pressure.Credit += r.Unmanaged.Cost - r.Managed.Cost
	if !r.UnmanagedFits {
		// The run is no longer one whose history fits: the strategy is
		// held to the unmanaged cost no more (see cacheAware).
		p.pressure.Outgrown = true
	}
	p.caches[agent] = cur
	return r
}

// cacheAgain is the cache report of a turn that sends the last payload
// again: its whole stable part is the shared prefix.
func (p *Planning) cacheAgain(last *lastTurn, b sdk.Budget) *CacheReport {
	pr := p.cfg.Pricing
	if pr == nil {
		return nil
	}
	volatile := b.Used - last.stable
	r := &CacheReport{Pricing: *pr, PrefixKept: true,
		Managed:   pr.Cost(b.Used, last.stable),
		Unmanaged: pr.Cost(last.unmanagedStable+volatile, last.unmanagedStable)}
	r.UnmanagedFits = calibrate(r.Unmanaged.Total, p.usage.Calibration) <= b.Available
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
			t.system = append(t.system, cacheUnit{key: c.comp.Name, sum: xxhash.Sum64String(c.comp.Text), tokens: c.tokens})
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
		if c := cur.unit(i); c.key != u.key || c.text != u.text || c.sum != u.sum {
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
		if a[i].key != b[i].key || a[i].sum != b[i].sum {
			return false
		}
	}
	return true
}
