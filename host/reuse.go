package host

import (
	"encoding/binary"
	"hash/fnv"
	"math"
	"slices"

	"github.com/ctxhost/ctxhost/host/history"
	"github.com/ctxhost/ctxhost/sdk"
)

// An unchanged turn — nothing added, set, applied or compacted since the
// last prepare for the same agent, the same budget — gets the same
// payload (assemblers are deterministic), so the host reuses the last
// assembly instead of sending the whole context again: its cost does not
// grow with the session.

// KeepPayloads keeps every payload the session answered unchanged until
// the returned function is called: a caller that gives up its hold on the
// session while it still sends a payload (or relays the answer to it)
// calls it first, so that the prepares of other calls meanwhile build
// their payloads in new memory even with Config.ReusePayload. The
// returned function may be called more than once; only the first call
// counts.
func (p *Planning) KeepPayloads() (release func()) {
	p.mu.Lock()
	p.keptPayloads++
	p.mu.Unlock()
	done := false
	return func() {
		p.mu.Lock()
		defer p.mu.Unlock()
		if !done {
			done = true
			p.keptPayloads--
		}
	}
}

// turnKey identifies what a turn assembles: the history's version, the
// core texts and each final component (a plugin's by the answer the host
// accepted, which is replaced whenever the plugin answers anew).
type turnKey struct {
	hist        *history.History
	histVersion uint64
	texts       [4]string
	comps       []componentKey
	budget      sdk.Budget
	memory      string // the memory blocks' rendering
}

type componentKey struct {
	name        string
	slot        sdk.Slot
	priority    int
	compactable bool
	tokens      int
	answer      *sdk.Component // a plugin's accepted answer; nil for the core
}

// lastTurn is the last assembled turn of one agent.
type lastTurn struct {
	key    turnKey
	id     uint64 // the payload's number (Prepared.PayloadID)
	result sdk.AssembleResult
	// stable and unmanagedStable are the cacheable tokens of the payload
	// and of the unmanaged history at that turn (for the cache report).
	stable, unmanagedStable int
}

// reusedTurn returns the last turn of agent when this one (final, b) is
// the same; nil otherwise, or for an agent's view (rebuilt every turn).
func (p *Planning) reusedTurn(agent string, view *AgentView, key turnKey) *lastTurn {
	if view != nil {
		return nil
	}
	last := p.lastTurns[agent]
	if last == nil || !last.key.equal(key) {
		return nil
	}
	return last
}

// rememberTurn keeps this turn's assembly for the next prepare of agent.
func (p *Planning) rememberTurn(agent string, key turnKey, out *Prepared) {
	if p.lastTurns == nil {
		p.lastTurns = map[string]*lastTurn{}
	}
	last := &lastTurn{key: key, id: out.PayloadID, result: sdk.AssembleResult{Payload: out.Payload, MediaType: out.MediaType, System: out.System, HasSystem: out.HasSystem}}
	if track := p.caches[agent]; track != nil {
		last.stable, last.unmanagedStable = track.stable, track.unmanagedTotal
	}
	p.lastTurns[agent] = last
}

// repeatsSavedTurn tells whether this turn (b, after compaction) is the
// marked one again: the same agent and budget. Only the bookkeeping uses
// it; the turn is assembled anew (assemblers are deterministic: the
// payload is the same).
func (p *Planning) repeatsSavedTurn(agent string, view *AgentView, b sdk.Budget) bool {
	return view == nil && p.pressure.TurnAgent == agent && p.pressure.TurnBudget == budgetDigest(b)
}

func (a turnKey) equal(b turnKey) bool {
	return a.hist == b.hist && a.histVersion == b.histVersion && a.texts == b.texts && a.memory == b.memory &&
		slices.Equal(a.comps, b.comps) && budgetEqual(a.budget, b.budget)
}

func budgetEqual(a, b sdk.Budget) bool {
	return a.Window == b.Window && a.Reserved == b.Reserved && a.Available == b.Available && a.Used == b.Used &&
		a.Utilization == b.Utilization && a.Status == b.Status && a.CalibratedUsed == b.CalibratedUsed &&
		a.Calibration == b.Calibration && a.Overhead == b.Overhead && slices.Equal(a.Components, b.Components)
}

// holdsTurn tells, before a prepare, whether the store holds the turn p
// marks (markSavedTurn) and nothing after it (no message, text, op, usage
// report or compaction since).
func (r *recording) holdsTurn(p pressureState) bool {
	return r.journal != nil && p.TurnVersion != 0 && r.version() == p.TurnVersion+1 && len(r.pending) == 0
}

// budgetDigest is a 64-bit FNV-1a digest of every field of b.
func budgetDigest(b sdk.Budget) uint64 {
	h := fnv.New64a()
	var buf [8]byte
	num := func(v uint64) {
		binary.LittleEndian.PutUint64(buf[:], v)
		h.Write(buf[:])
	}
	str := func(v string) {
		num(uint64(len(v)))
		h.Write([]byte(v))
	}
	for _, v := range []int{b.Window, b.Reserved, b.Available, b.Used, b.CalibratedUsed, b.Overhead, len(b.Components)} {
		num(uint64(v))
	}
	num(math.Float64bits(b.Utilization))
	num(math.Float64bits(b.Calibration))
	str(b.Status)
	for _, c := range b.Components {
		str(c.Name)
		num(uint64(c.Tokens))
	}
	return h.Sum64()
}

// deepStep is History.DeepStep, remembered for the history's version (it
// may walk every message), in raw tokens.
func (p *Planning) deepStep() deepMemo {
	h := p.conv.hist
	v := h.Version()
	if p.deep.hist != h || p.deep.version != v || !p.deep.valid {
		free, keep := h.DeepStep()
		demos := 0
		if free > 0 {
			demos = h.DropFirstTokens()
		}
		p.deep = deepMemo{hist: h, version: v, valid: true, free: free, keep: keep, demos: demos}
	}
	return p.deep
}

// deepStepUnder is the deepest history step in calibrated tokens for a
// strategy to weigh, when the context b is at the warning threshold or
// over the available budget, or has outgrown it on an earlier turn, or the
// session has cost less than the unmanaged history so far (its credit);
// zero otherwise, where no strategy needs it.
func (t *turn) deepStepUnder(b sdk.Budget) DeepStep {
	s := t.s
	if b.Utilization < s.cfg.Thresholds.Warning && b.CalibratedUsed <= b.Available && !s.plan.pressure.Outgrown && s.plan.pressure.Credit <= 0 {
		return DeepStep{}
	}
	d := s.plan.deepStep()
	step := DeepStep{Free: calibrate(d.free, s.plan.usage.Calibration), Keep: calibrate(d.keep, s.plan.usage.Calibration),
		Demonstrations: calibrate(d.demos, s.plan.usage.Calibration)}
	if prev := t.lastCached(); prev != nil && d.free > 0 {
		// The system units as the previous payload had them, then the
		// history shown before the step's first change.
		step.Before = prev.stable - prev.historyTokens + s.conv.hist.ViewTokens() - d.free - d.keep
	}
	return step
}

// lastCached is what the cache report remembers of the agent's previous
// payload, when this turn's history view is the session's (nil otherwise).
func (t *turn) lastCached() *cacheTrack {
	if t.view != nil {
		return nil
	}
	return t.s.plan.caches[t.agent.Name]
}

type deepMemo struct {
	hist       *history.History
	version    uint64
	valid      bool
	free, keep int
	demos      int // tokens of the demonstrations the step omits
}

// payloadLinks numbers a session's assembled payloads and remembers each
// agent's last one: the assembler's stream (session and agent) answers
// how much of its last payload the next one repeats (sdk.AssembleResult
// Repeats), and these numbers tell a caller which payload that was.
type payloadLinks struct {
	last uint64            // the last number given
	of   map[string]uint64 // each agent's last payload, as its stream holds it
}

// next numbers an agent's new payload, which repeats the first repeats
// bytes of the stream's last one, and returns its number, the number of
// the payload it extends and how many bytes it repeats (0, 0 when not
// known). A payload chosen among several tries (trimmed) is not the
// stream's last one: the next payload extends none.
func (l *payloadLinks) next(agent string, repeats int, trimmed bool) (id, extends uint64, n int) {
	l.last++
	prev := l.of[agent]
	if l.of == nil {
		l.of = map[string]uint64{}
	}
	l.of[agent] = l.last
	if trimmed {
		delete(l.of, agent)
		return l.last, 0, 0
	}
	if prev == 0 || repeats <= 0 {
		return l.last, 0, 0
	}
	return l.last, prev, repeats
}

// lost forgets an agent's last payload: an assembly failed, and what its
// stream holds is not known.
func (l *payloadLinks) lost(agent string) { delete(l.of, agent) }

// appendShared is the prefix this turn's payload shares with the agent's
// previous one when it only appends (StrategyInput.Shared): the previous
// payload before its final message; 0 when unknown.
func (t *turn) appendShared() int {
	if prev := t.lastCached(); prev != nil {
		return prev.stable
	}
	return 0
}
