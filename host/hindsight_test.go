package host

import (
	"context"
	"math"
	"slices"
	"testing"

	"github.com/ctxhost/ctxhost/host/history"
	"github.com/ctxhost/ctxhost/sdk"
	"github.com/ctxhost/ctxhost/tokenizer"
)

// runShape is a run replayed unmanaged (every message, nothing compacted),
// as the hindsight bound needs it: each message's tokens and whether it
// may be omitted, and per turn the messages the history holds and the
// tokens around them.
type runShape struct {
	tokens []int  // each message's tokens, in order
	pinned []bool // the message is never omitted (the task, pinned ones)
	demos  int    // the leading demonstrations, omitted whatever is recent
	turns  []shapeTurn
	// cuts: messages shown cut from a turn on (cutShape); lowered: the
	// bound reads every shared prefix, however short (see cutShape).
	cuts    []shapeCut
	lowered bool
	// marker: the fewest tokens the omission marker counts (the history
	// shows one in every view that omits a message, whatever it omits).
	marker int
}

// shapeCut is a message shown cut from a turn on: from turn (0-based) on,
// message msg counts at most tokens.
type shapeCut struct{ turn, msg, tokens int }

// tokensAt is tokens with the cuts made up to turn t applied.
func (sh runShape) tokensAt(tokens []int, t int) []int {
	out := tokens
	for _, c := range sh.cuts {
		if c.turn <= t && c.tokens < out[c.msg] {
			if &out[0] == &tokens[0] {
				out = append([]int(nil), tokens...)
			}
			out[c.msg] = c.tokens
		}
	}
	return out
}

// shapeTurn is one turn of a runShape.
type shapeTurn struct {
	messages int // messages in the history
	total    int // tokens of the unmanaged payload
	head     int // framing and system prompt: before the history
	tail     int // the final message's framing, context and input: after it
}

// shapeOf replays run at an unlimited window, nothing compacted, and
// records its shape, with a prepare where replayReal prepares one.
func shapeOf(t testing.TB, run realRun) runShape {
	t.Helper()
	s, err := New(Options{}).NewSession("shape", Config{Encoding: tokenizer.O200kBase, Window: 1 << 30, Reserved: 1000,
		Strategy: StrategyConfig{Name: StrategyLazy}, History: HistoryConfig{Options: history.Options{PreserveRecent: realPreserve}},
		Assembler: NewLocalAssemblerForTest(), Format: "api"})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Conversation().SetSystemPrompt(run.system); err != nil {
		t.Fatal(err)
	}
	var sh runShape
	for n := 1; n <= len(run.messages); n++ { // the marker for any count it may show
		tokens := s.conv.hist.Count(sdk.Message{Role: sdk.RoleSystem, Content: history.OmittedMarker(n)})
		if n == 1 || tokens < sh.marker {
			sh.marker = tokens
		}
	}
	answered := false
	for i, m := range run.messages {
		answered = answered || answersAction(run.messages, i)
		if m.Role == sdk.RoleAssistant && answered {
			p, err := s.Prepare(context.Background(), sdk.AgentIdentity{})
			if err != nil || p.Compaction != nil || p.Cache == nil {
				t.Fatalf("unmanaged replay: %v, compaction %v", err, p.Compaction)
			}
			each, all := s.conv.hist.ViewCounts()
			if len(each) != len(sh.tokens) {
				t.Fatalf("unmanaged replay: %d messages shown of %d", len(each), len(sh.tokens))
			}
			stable := s.plan.caches[""].stable
			sh.turns = append(sh.turns, shapeTurn{messages: len(each), total: p.Cache.Managed.Total, head: stable - all, tail: p.Cache.Managed.Total - stable})
		}
		added, err := s.Conversation().AddMessage(m)
		if err != nil {
			t.Fatal(err)
		}
		kind := s.conv.hist.Kind(added.ID)
		each, _ := s.conv.hist.ViewCounts()
		sh.tokens = append(sh.tokens, each[len(each)-1])
		sh.pinned = append(sh.pinned, added.Pinned || kind == sdk.KindTask)
		if kind == sdk.KindDemonstration && len(sh.tokens) == sh.demos+1 {
			sh.demos++
		}
	}
	return sh
}

// cutToFit is sh with the messages the window must cut made as small as
// the cut leaves them, from the start: on a turn where even the deepest
// view (nothing omitted but what may be) does not fit the available
// budget, the largest messages shown that may be omitted (then pinned
// ones) lose what is over, as the window's cut takes it. The window's cut
// may take more, and earlier: on such a run the bound is approximate. It
// says whether it cut anything.
func cutToFit(sh runShape, available, preserve int) (runShape, bool) {
	cutAny := false
	tokens := append([]int(nil), sh.tokens...)
	for t, tt := range sh.turns {
		m := tt.messages
		shown := func(i int) bool { return sh.pinned[i] || i >= max(0, m-preserve) && i >= min(sh.demos, m) }
		at := sh.tokensAt(tokens, t) // with the cuts made by then
		total := tt.head + tt.tail
		for i := range m {
			if shown(i) {
				total += at[i]
			}
		}
		for over := total - available; over > 0; {
			largest := -1
			for i := range m {
				if shown(i) && at[i] > 0 && (largest < 0 || sh.pinned[largest] && !sh.pinned[i] ||
					sh.pinned[largest] == sh.pinned[i] && at[i] > at[largest]) {
					largest = i
				}
			}
			if largest < 0 {
				break
			}
			cut := min(over, at[largest])
			tokens[largest] = at[largest] - cut
			if &at[0] != &tokens[0] {
				at[largest] -= cut
			}
			over -= cut
			cutAny = true
		}
	}
	sh.tokens = tokens
	return sh, cutAny
}

// cutShape is sh with the cuts a policy made (cuts: each time it showed
// a message cut shorter than before, ids the messages' in order): from
// the turn it showed one cut on, the message counts as shown then. On a
// run where the window cuts, the hindsight bound of the shape cut that
// way is a lower bound for the policy. The same omission schedule on the
// cut shape pays no more on any turn: a turn costs write x total -
// (write - read) x read; the shape holds every message at most as large
// as the policy's payload does on that turn, and what it reads is at
// least what the policy reads of the same messages, so what the shape
// reads fewer (its messages smaller) is no more than what it sends
// fewer. A message the previous payload held, shown cut shorter, changes
// the payload there: on that turn the shape reads nothing from that
// message on either. Prefixes under the provider's cacheable minimum are
// read in the shape, so that a smaller prefix never costs more. cutToFit
// still applies and only lowers it.
func cutShape(sh runShape, ids []string, cuts []cutSeen) runShape {
	index := make(map[string]int, len(ids))
	for i, id := range ids {
		index[id] = i
	}
	sh.cuts = nil
	for _, c := range cuts {
		if i, ok := index[c.id]; ok && i < len(sh.tokens) {
			sh.cuts = append(sh.cuts, shapeCut{turn: c.turn, msg: i, tokens: c.tokens})
		}
	}
	sh.lowered = true
	return sh
}

// cutSeen is a message shown cut: from turn (0-based) on, message id was
// shown with at most tokens.
type cutSeen struct {
	turn, tokens int
	id           string
}

// hindsightBound is, for every turn t, a lower bound on what a policy
// pays with prompt caching under p for the run's turns up to t, if the run
// ended there: the cheapest schedule of omissions chosen knowing the whole
// run. It is a shortest path over the views an omitting policy can show:
// nothing is omitted until the unmanaged history reaches the warning
// utilization (the bound is for policies that leave a history that fits
// under it whole, as every strategy here but the adaptive one, which
// compacts ahead of predicted growth, does: allowing it would make the
// bound the cost of omitting early on a run that goes on long, a bound
// for a different promise);
// from then on the view omits every message before a frontier that may
// move forward only, but never a pinned message nor the latest preserve
// messages (leading demonstrations may go whenever), and it fits the
// available budget (messages the window must cut for even the deepest
// view to fit are taken as cut from the start: cutToFit). Every bound is
// on the cheap side: the omission marker counts the fewest tokens it may
// (the history shows one in every view that omits a message, and a
// masked observation's placeholder is larger), a tool call may be
// parted from its result, a turn whose view does not change reads the
// whole previous payload, one that changes reads everything before the
// first message it omits anew (in whole caching steps, see below), and
// compacting below the warning threshold is allowed. A policy that masks observations instead of
// omitting them shows more tokens after a change no later than the
// omission's, so it pays no less.
//
// A provider that reads its cache only in whole steps of Granularity
// tokens (OpenAI's 128) reads, of the shared prefix, whole steps only;
// a policy whose payload is d tokens over its view (a larger marker or
// placeholder) shares at most d more (what it reads beyond the view it
// also sends beyond it), and those d may complete a step the view's
// prefix falls short of. So the bound ranges over that excess too: a
// view's turns are priced as a payload of d more tokens sharing d more,
// the same d on every turn the view does not change (the policy only
// appends, the excess stays where it was), any d on a turn it changes.
// An excess of d+g costs no less than one of d on every turn (g more
// sent, at most g more read), so 0 <= d < g is all it tries; with
// Granularity over 1 the bound reads a prefix under the provider's
// cacheable minimum too, which keeps that true. With Granularity 1 no
// excess makes a payload cheaper, and d is 0.
//
// It is hindsightBoundOf(..., anySchedule): a bound for every policy.
func hindsightBound(sh runShape, available int, warning float64, preserve int, p sdk.Pricing) []float64 {
	return hindsightBoundOf(sh, available, warning, preserve, p, anySchedule)
}

// scheduleClass says which omission schedules a hindsight bound ranges
// over.
type scheduleClass int

const (
	// anySchedule: every schedule; the bound holds for every policy.
	anySchedule scheduleClass = iota
	// keepsUnmanaged: the schedules that, on every turn up to which the
	// unmanaged history has always fitted the available budget, have cost
	// no more so far than the unmanaged history. A policy deciding each
	// turn on what came before (every strategy here) that is never dearer
	// than the unmanaged history on a run that history fits is on such a
	// schedule on every run: it cannot tell a longer run from the run
	// that ends at any of those turns, which that history fits. So the
	// bound holds for such a policy on every run, and for any policy on a
	// run where it kept to the unmanaged cost that way.
	keepsUnmanaged
)

// hindsightBoundOf is the hindsight bound over the schedules of class.
func hindsightBoundOf(sh runShape, available int, warning float64, preserve int, p sdk.Pricing, class scheduleClass) []float64 {
	// What the unmanaged history costs up to each turn, and whether it
	// has fitted so far, as the run is (before any cut) and as priced.
	unmanaged, fitted := make([]float64, len(sh.turns)), make([]bool, len(sh.turns))
	sum, fits, stable := 0.0, true, 0
	for t, tt := range sh.turns {
		sum += p.Cost(tt.total, stable).Cost
		stable = tt.total - tt.tail
		fits = fits && tt.total <= available
		unmanaged[t], fitted[t] = sum, fits
	}
	sh, _ = cutToFit(sh, available, preserve)
	step := max(p.Granularity, 1) // the excesses a policy's payload may have, modulo the caching step
	if sh.lowered || step > 1 {
		p.MinCacheable = 0 // so that a smaller message never makes the bound dearer
	}
	n := len(sh.tokens)
	all := make([]int, n+1)    // all[i]: tokens of the messages before i
	pinned := make([]int, n+1) // pinned[i]: tokens of the pinned messages before i
	free := make([]int, n+1)   // free[i]: messages before i that may be omitted
	sums := func(tokens []int) {
		for i, tk := range tokens {
			all[i+1], pinned[i+1], free[i+1] = all[i]+tk, pinned[i], free[i]
			if sh.pinned[i] {
				pinned[i+1] += tk
			} else {
				free[i+1]++
			}
		}
	}
	sums(sh.tokens)
	// firstOmittable[f] is the first message at or after f that may be omitted.
	firstOmittable := make([]int, n+1)
	firstOmittable[n] = n
	for i := n - 1; i >= 0; i-- {
		firstOmittable[i] = firstOmittable[i+1]
		if !sh.pinned[i] {
			firstOmittable[i] = i
		}
	}
	// recut[t] is the first message the previous turn held that turn t
	// shows cut shorter (-1: none).
	recut := make([]int, len(sh.turns))
	for t := range recut {
		recut[t] = -1
		for _, c := range sh.cuts {
			if c.turn == t && t > 0 && c.msg < sh.turns[t-1].messages && (recut[t] < 0 || c.msg < recut[t]) {
				recut[t] = c.msg
			}
		}
	}
	inf := math.Inf(1)
	type state struct {
		cost   []float64 // cost[d]: the payload d tokens over the view's (see granularExcess)
		stable int       // tokens of the payload before its final message
	}
	price := func(total, shared, d int) float64 { return p.Cost(total+d, shared+d).Cost }
	best := make([]float64, len(sh.turns))
	prev := map[int]state{}
	over := false
	for t, tt := range sh.turns {
		if len(sh.cuts) > 0 {
			sums(sh.tokensAt(sh.tokens, t)) // the messages as cut by then
		}
		m := tt.messages
		over = over || float64(tt.total) >= warning*float64(available) || tt.total > available
		deepest := max(0, m-preserve, min(sh.demos, m))
		if !over {
			deepest = 0
		}
		cur := map[int]state{}
		// A frontier f omits every message before f that may be omitted;
		// frontiers that omit the same messages are one view (the
		// smallest f stands for them).
		for f := 0; f <= deepest; f++ {
			if f > 0 && sh.pinned[f-1] {
				continue
			}
			shown := all[m] - all[f] + pinned[f]
			if free[f] > 0 {
				shown += sh.marker // the view omits a message: the marker stands for it
			}
			total := tt.head + shown + tt.tail
			if total > available && (f < deepest || !over) {
				continue
			}
			stable := total - tt.tail
			st := state{cost: make([]float64, step), stable: stable}
			if t == 0 {
				for d := range step {
					st.cost[d] = p.Cost(total+d, 0).Cost
				}
				cur[f] = st
				continue
			}
			for d := range step {
				st.cost[d] = inf
			}
			for g, ps := range prev {
				if g > f {
					continue
				}
				shared, same := ps.stable, true // the same view: the whole previous payload
				if free[g] != free[f] {
					// The first change is the first message omitted anew.
					shared, same = tt.head+pinned[firstOmittable[g]], false
				}
				if j := recut[t]; j >= 0 {
					// A message the previous payload held is cut anew: the
					// payload changes there at the latest.
					before := pinned[j]
					if j >= f {
						before = pinned[f] + all[j] - all[f]
						if free[f] > 0 {
							before += sh.marker // the marker stands before the messages from f on
						}
					}
					shared, same = min(shared, tt.head+before), false
				}
				shared = min(shared, stable)
				if same { // the policy only appends: its excess is what it was
					for d := range step {
						st.cost[d] = min(st.cost[d], ps.cost[d]+price(total, shared, d))
					}
					continue
				}
				least := slices.Min(ps.cost) // a new view: any excess
				for d := range step {
					st.cost[d] = min(st.cost[d], least+price(total, shared, d))
				}
			}
			if slices.Min(st.cost) < inf {
				cur[f] = st
			}
		}
		if class == keepsUnmanaged && fitted[t] {
			for f, st := range cur {
				for d, c := range st.cost {
					if c > unmanaged[t]*(1+1e-12) {
						st.cost[d] = inf
					}
				}
				if slices.Min(st.cost) == inf {
					delete(cur, f)
				}
			}
		}
		best[t] = inf
		for _, st := range cur {
			best[t] = min(best[t], slices.Min(st.cost))
		}
		prev = cur
	}
	return best
}
