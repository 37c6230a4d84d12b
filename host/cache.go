package host

import (
	"crypto/sha256"
	"encoding/binary"

	"github.com/ctxhost/ctxhost/sdk"
)

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

// cacheUnit is one stable piece of a payload in order: the system part,
// then each history message; the final message is left out (volatile).
type cacheUnit struct {
	hash   [32]byte
	tokens int
}

// cacheTrack is what the previous prepare of one agent looked like.
type cacheTrack struct {
	units          []cacheUnit
	unmanagedTotal int // stable tokens of the unmanaged payload (system + every message)
	systemHash     [32]byte
}

// pricing is the price model the session reports with: the explicit one,
// else the assembler's default for the format, else nil (no report).
func (c Config) pricing() *sdk.Pricing {
	if c.Pricing != nil || c.Assembler == nil {
		return c.Pricing
	}
	for i, f := range c.Assembler.Info().Formats {
		if f.Name == c.Format || (c.Format == "" && i == 0) {
			return f.Pricing
		}
	}
	return nil
}

// cacheReport measures the final components against the previous prepare
// for agent and remembers them for the next one.
func (s *Session) cacheReport(agent string, final []countedComponent, b sdk.Budget) *CacheReport {
	p := s.cfg.pricing()
	if p == nil {
		return nil
	}
	units, systemHash := s.cacheUnits(final, b)
	stable := 0
	for _, u := range units {
		stable += u.tokens
	}
	_, all := s.hist.ViewCounts()
	unmanagedStable := units[0].tokens + all
	if s.caches == nil {
		s.caches = map[string]*cacheTrack{}
	}
	prev := s.caches[agent]
	shared, kept := 0, prev != nil
	if prev != nil {
		for i, u := range prev.units {
			if i >= len(units) || units[i].hash != u.hash {
				kept = false
				break
			}
			shared += u.tokens
		}
	}
	unmanagedShared := 0
	if prev != nil && prev.systemHash == systemHash {
		unmanagedShared = prev.unmanagedTotal
	}
	volatile := b.Used - stable
	r := &CacheReport{Pricing: *p, PrefixKept: kept,
		Managed:   p.Cost(b.Used, shared),
		Unmanaged: p.Cost(unmanagedStable+volatile, unmanagedShared)}
	r.UnmanagedFits = calibrate(r.Unmanaged.Total, s.usage.Calibration) <= b.Available
	s.caches[agent] = &cacheTrack{units: units, unmanagedTotal: unmanagedStable, systemHash: systemHash}
	return r
}

// cacheUnits splits the final components into stable units: the system
// part (every system-slot component and the request framing) and each
// history message; context and input form the volatile final message.
func (s *Session) cacheUnits(final []countedComponent, b sdk.Budget) ([]cacheUnit, [32]byte) {
	sys := sha256.New()
	system := cacheUnit{tokens: b.Overhead}
	var history []cacheUnit
	for _, c := range final {
		switch {
		case c.comp.Slot == sdk.SlotSystem:
			system.tokens += c.tokens
			sys.Write([]byte(c.comp.Name + "\x00" + c.comp.Text + "\x00"))
		case c.isHistory():
			each, _ := s.hist.ViewCounts()
			for i, m := range c.comp.Messages {
				history = append(history, cacheUnit{hash: messageHash(m), tokens: each[i]})
			}
		}
	}
	copy(system.hash[:], sys.Sum(nil))
	return append([]cacheUnit{system}, history...), system.hash
}

// messageHash identifies a message as the provider sees it.
func messageHash(m sdk.Message) [32]byte {
	h := sha256.New()
	for _, s := range []string{m.ID, m.Role, m.Name, m.Content, m.ToolCallID} {
		binary.Write(h, binary.LittleEndian, int64(len(s)))
		h.Write([]byte(s))
	}
	for _, tc := range m.ToolCalls {
		for _, s := range []string{tc.ID, tc.Name, tc.Arguments} {
			binary.Write(h, binary.LittleEndian, int64(len(s)))
			h.Write([]byte(s))
		}
	}
	var out [32]byte
	copy(out[:], h.Sum(nil))
	return out
}
