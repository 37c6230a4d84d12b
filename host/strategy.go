package host

import (
	"fmt"
	"math"

	"github.com/ctxhost/ctxhost/sdk"
)

// Strategy names.
const (
	StrategyLazy      = "lazy"
	StrategyProactive = "proactive"
	StrategyAdaptive  = "adaptive"
	StrategyGraduated = "graduated"
	StrategyCache     = "cache"
)

// Strategy decides, before each prepare's compaction, whether to compact and
// down to what target.
type Strategy interface {
	Name() string
	Decide(in StrategyInput) Decision
}

// StrategyInput is what a strategy sees: the budget before compaction, the
// thresholds, the pressure action of this turn and the recent growth.
type StrategyInput struct {
	Budget     sdk.Budget
	Thresholds Thresholds
	Action     PressureAction
	// Growth holds the calibrated token growth of recent turns, oldest
	// first (the used tokens before compaction minus the previous prepare's
	// used tokens after compaction).
	Growth []int
	// Floor is the calibrated size the last compaction could not go below
	// (its target unmet), 0 when it met its target.
	Floor int
	// MinFree is the least a compaction must be able to free to be worth
	// the prompt prefix it rewrites.
	MinFree int
	// Deep is what the deepest step the history may take would do now,
	// in calibrated tokens (zero below the warning threshold while the
	// context has never outgrown the budget and the session has no
	// credit, where it is not worked out);
	// Pricing the provider's prompt-caching prices (nil:
	// unknown); Turns the turns prepared before this one in the session's
	// life (saved with it; a turn prepared again unchanged is not counted).
	Deep    DeepStep
	Pricing *sdk.Pricing
	Turns   int
	// Shared is the tokens of the previous payload before its final
	// message, as the cache report counts them (uncalibrated): the prefix
	// this turn's payload shares with it when it only appends (0:
	// unknown). With Deep.Before it tells what of each prefix a provider
	// that reads its cache in whole steps, from a minimum, leaves unread.
	Shared int
	// Outgrown: on an earlier turn the context did not fit the available
	// budget before its compaction, or the unmanaged history (every
	// message, nothing compacted) would not have, with prompt caching
	// priced (saved with the session).
	Outgrown bool
	// Credit is what the session's payloads have cost less than the
	// unmanaged history's would have, summed over the turns before this
	// one, with prompt caching priced (saved with the session).
	Credit float64
	// Preserve is how many of the most recent turns the history never
	// compacts (preserve_recent).
	Preserve int
}

// DeepStep is the deepest step the history may take (history.DeepStep):
// omit the demonstrations and every message before the preserved recent
// ones that the sliding window may omit.
type DeepStep struct {
	// Free is the tokens it frees; Keep the tokens shown after it from
	// the first message it changes on (the omission marker included),
	// which a provider's prompt cache must take again.
	Free, Keep int
	// Demonstrations is the tokens of the demonstrations it omits (0 once
	// they have been): messages the agent does not need to go on, which
	// every later turn would read again.
	Demonstrations int
	// Before is the tokens of the payload before its first change, as the
	// cache report counts them (uncalibrated): the prefix the payload it
	// leaves shares with the previous one (0: unknown).
	Before int
}

// Decision is a strategy's answer.
type Decision struct {
	// MaskHistory asks the history to mask this many of its oldest tool
	// outputs before anything else (graduated strategy).
	MaskHistory int
	// Compact runs the compaction pipeline down to Target calibrated tokens.
	Compact bool
	Target  int
	Reason  string
	// Deep asks the history for at least its deepest step (see
	// DeepStep), whatever Target leaves to free.
	Deep bool
	// Room: when the context still does not fit after the compaction and
	// the window must cut messages, it cuts this many calibrated tokens
	// more than it must, so that the next turn need not cut again.
	Room int
}

func newStrategy(cfg StrategyConfig) (Strategy, error) {
	switch cfg.Name {
	case StrategyLazy:
		return lazy{}, nil
	case StrategyProactive:
		return proactive{target: cfg.Target}, nil
	case StrategyAdaptive:
		return adaptive{}, nil
	case StrategyGraduated:
		return graduated{batch: cfg.MaskBatch}, nil
	case StrategyCache:
		return cacheAware{target: cfg.Target}, nil
	}
	return nil, fmt.Errorf("unknown strategy %q (want %s, %s, %s, %s or %s)", cfg.Name,
		StrategyLazy, StrategyProactive, StrategyAdaptive, StrategyGraduated, StrategyCache)
}

// lazy compacts only when the context is over the available budget, down to
// just under it.
type lazy struct{}

func (lazy) Name() string { return StrategyLazy }

func (lazy) Decide(in StrategyInput) Decision {
	b := in.Budget
	if b.CalibratedUsed <= b.Available {
		return Decision{}
	}
	return Decision{Compact: true, Target: b.Available,
		Reason: fmt.Sprintf("lazy: %d tokens over the available %d", b.CalibratedUsed, b.Available)}
}

// proactive compacts at the warning threshold down to a lower target
// (hysteresis: most turns only append, so the provider's prefix cache hits).
type proactive struct{ target float64 }

func (proactive) Name() string { return StrategyProactive }

// When the last compaction could not reach the target (what must be kept
// is above it), the floor it reached stands in for the target: the
// strategy appends until the context has grown by MinFree over that floor,
// instead of rewriting the prompt every turn for nothing. A context over
// the available budget is always compacted.
func (p proactive) Decide(in StrategyInput) Decision {
	b := in.Budget
	target := fraction(b.Available, p.target)
	if b.CalibratedUsed > b.Available {
		return Decision{Compact: true, Target: target,
			Reason: fmt.Sprintf("proactive: %d tokens over the available %d, target %.2f", b.CalibratedUsed, b.Available, p.target)}
	}
	if b.Utilization < in.Thresholds.Warning {
		return Decision{}
	}
	if in.Floor > target && b.CalibratedUsed-in.Floor < in.MinFree {
		return Decision{}
	}
	return Decision{Compact: true, Target: target,
		Reason: fmt.Sprintf("proactive: utilization %.2f >= warning %.2f, target %.2f", b.Utilization, in.Thresholds.Warning, p.target)}
}

// adaptive predicts the next turn's growth as the largest growth of the
// recent turns and compacts when the next turn would overflow, down to the
// available budget minus two predicted turns (never above the critical
// threshold).
type adaptive struct{}

func (adaptive) Name() string { return StrategyAdaptive }

func (adaptive) Decide(in StrategyInput) Decision {
	b := in.Budget
	growth := 0
	for _, g := range in.Growth {
		growth = max(growth, g)
	}
	if b.CalibratedUsed+growth <= b.Available {
		return Decision{}
	}
	target := min(b.Available-2*growth, fraction(b.Available, in.Thresholds.Critical))
	return Decision{Compact: true, Target: max(target, 0),
		Reason: fmt.Sprintf("adaptive: %d used + %d predicted growth > %d available", b.CalibratedUsed, growth, b.Available)}
}

// graduated answers pressure in steps: in the Mask zone and above, mask
// the oldest history tool outputs in batches; it never compacts plugins, and runs the
// pipeline only when the context would not fit at all (down to the
// available budget). WindDown and Restart are left to the agent loop.
type graduated struct{ batch int }

func (graduated) Name() string { return StrategyGraduated }

func (g graduated) Decide(in StrategyInput) Decision {
	b := in.Budget
	d := Decision{}
	if in.Action != ActionContinue {
		d.MaskHistory = g.batch
		d.Reason = fmt.Sprintf("graduated: %s at utilization %.2f", in.Action, b.Utilization)
	}
	if b.CalibratedUsed > b.Available {
		d.Compact, d.Target = true, b.Available
	}
	return d
}

func fraction(n int, f float64) int { return int(math.Floor(float64(n) * f)) }

// cacheAware compacts as rarely and as deep as it can, with prompt
// caching priced in. A turn that only appends pays the read price for
// what it repeats; a compaction pays the write price for everything it
// keeps after the first message it changes. Its rule and what it
// promises, whatever the run:
//
//   - Forced: when the context does not fit the available budget it takes
//     the history's deepest step (DeepStep: the demonstrations and every
//     message before the preserved recent ones that the window may omit),
//     and on down to the target when that is not enough. No step that
//     keeps the preserved messages as they are frees more or rewrites
//     less, so the next forced compaction is as far away as any such
//     policy can put it: the reason says how many turns that is at the
//     observed growth (the mean of the recent turns'). When even that
//     does not fit (the preserved messages and the task fill the window),
//     the window must cut messages head + tail, and it cuts a turn of the
//     observed growth more (Decision.Room, never below the target), the
//     largest messages that are not pinned first, so the task before them
//     is not written again: at the observed growth the next turn neither
//     cuts nor compacts again, where cutting only what is over has every
//     following turn cut and rewrite the recent messages once more. When
//     the deepest step fits, it cuts nothing: the preserved recent
//     messages are kept whole, though the next turn may then be forced
//     again, as it is for every schedule that keeps them whole.
//   - Cut alone: when the window must cut even after the deepest step,
//     and the cut that step would need (what is over after it and a turn
//     of the observed growth) leaves, without the step, at least a turn of
//     the growth observed before this turn free, it leaves the history as
//     it is and has the window make that cut alone. The observed growth
//     then counts the spike that is why the window must cut, which the
//     cut shortens; the step would free less than that spike adds to the
//     mean, and rewrite everything after the first message it omits. The
//     cut alone rewrites only what follows the first message it cuts, and
//     keeps every message the step would have omitted. It is never taken
//     when the step would omit the demonstrations.
//   - Speculative, while the context has always fitted: below the budget
//     (from the warning threshold on) it compacts only when the deepest
//     step is cheaper already on the turn it is taken: what it stops
//     sending, at the read price, is more than the premium of writing
//     instead of reading what it keeps after its first change (the tokens
//     new this turn are written anyway; what the provider leaves unread of
//     the prefix the step's payload shares, all of it under its cacheable
//     minimum, else what falls short of a whole caching step, is written
//     too, less what it leaves unread of the prefix appending shares,
//     which appending writes). A run may end after
//     any turn, so no later turn's saving is counted: a speculative
//     compaction never makes a run dearer than appending would have,
//     even when the run ends right after it.
//   - Demonstrations, while the context fits: when the deepest step omits
//     the demonstrations (which the agent does not need to go on, and
//     every later turn would read again) and what it costs on its turn
//     over appending is less than what the next turn reads fewer, it is
//     taken on that turn. A run that goes on one more turn is then no
//     dearer than appending; one that ends on that very turn is dearer by
//     less than one turn's reading of what the step stopped sending. On
//     a run that goes on, waiting costs a turn's reading of them for
//     every turn waited, and more to write once the history has grown.
//   - Speculative, once the context has outgrown the budget (a forced
//     compaction came before, or the unmanaged history would not have
//     fitted on an earlier turn, so the run is no longer one the history
//     fits): it takes the deepest step when it pays back within the
//     turns left before the budget would force the next one at the
//     observed growth (the room left over the mean growth, h turns):
//     the premium is at most h+1 times the read price of what it stops
//     sending. If the run goes on that far, it costs no more than
//     appending until then and the forced compaction it stands in for
//     rewrites nothing; if the run ends sooner, it loses at most its
//     premium. It so picks, before each forced compaction, a turn whose
//     recent messages are few tokens or new anyway, instead of the turn
//     the budget runs out on, whose recent messages are whatever they are.
//     And it takes it there only when its premium is at most what writing
//     instead of reading the recent messages costs at the observed growth
//     (preserve_recent messages, a turn of the growth for each action and
//     observation they hold, recentTurns): a step that keeps more has a
//     spike among the recent messages, which leaves them within that many
//     turns, after which the step frees it instead of writing it again.
//     Below the warning threshold, once the context has outgrown the
//     budget, it takes the deepest step when it pays back by the next
//     turn: its premium less what it stops reading on its turn is under
//     what the next turn reads fewer. A run that goes on is then no
//     dearer than appending from the next turn on; one that ends on that
//     very turn is dearer by less than one turn's reading of what the
//     step stopped sending. It also takes it there when it frees at
//     least a turn of the observed growth and its premium is at most
//     what writing a turn of that growth instead of reading it costs:
//     a run that ends on that turn is dearer than appending by no more
//     than that, and a compaction the budget forces, which the step puts
//     off by a turn at least, rewrites the preserved recent messages as
//     they are then: at the observed growth, a turn of it for every
//     action and observation they hold but the newest. Such a turn is
//     one whose recent messages are few tokens, which the step keeps,
//     where the one the budget would force keeps whatever has come since.
//   - Spending its credit, while the context has always fitted: once the
//     session has cost less than the unmanaged history would have, summed
//     over its turns (StrategyInput.Credit: after a compaction, each turn
//     reads fewer tokens than the unmanaged history's), the rules for an
//     outgrown context above apply, under the warning line too, to a step
//     whose cost on its turn over appending is within that credit (less
//     creditMargin, what a payload that only appends may cost over the
//     unmanaged history's on a turn with a caching step over 1): a run
//     that ends on that turn still costs no more than the unmanaged
//     history.
//   - Otherwise it only appends, and the provider's cache keeps the prefix.
//
// Together: on a run whose history always fits it costs no more than the
// unmanaged history, on every turn the run may end but the one it drops
// demonstrations ahead on (there by less than the next turn saves); the
// decision and its arithmetic are in the reason. What it does not
// promise is a constant ratio to the cheapest schedule chosen knowing the
// whole run: that schedule may omit history before the run first
// outgrows the budget on a turn where it pays only if the run goes on,
// which no rule keeping the promise above may do. Such a rule pays at
// least the bound over the schedules that keep to the unmanaged cost
// while it fits, which on some runs is more than 1.15 times the other
// (TestNeverDearerRulesOutTheBoundGoal lists them).
type cacheAware struct{ target float64 }

func (cacheAware) Name() string { return StrategyCache }

func (c cacheAware) Decide(in StrategyInput) Decision {
	b := in.Budget
	if b.CalibratedUsed > b.Available {
		return c.decideOverBudget(in)
	}
	deep := in.Deep
	below := b.Utilization < in.Thresholds.Warning
	if below && !in.Outgrown && in.Credit <= 0 || deep.Free < max(in.MinFree, 1) {
		return Decision{}
	}
	premium, saved := speculativePremium(in)
	// Free to speculate: the run is no longer one the history fits, or
	// what the step costs on its turn over appending is within what the
	// session has cost less than the unmanaged history so far.
	free, why := in.Outgrown, "the context outgrew the budget before"
	if !free && premium-saved <= in.Credit-creditMargin(in.Pricing) {
		free = true
		why = fmt.Sprintf("the %.0f units the step costs this turn over appending are within the %.0f the session has cost less than the unmanaged history",
			premium-saved, in.Credit)
	}
	if below && !free {
		return Decision{}
	}
	if below {
		return decideBelowWarning(in, premium, saved, why)
	}
	return decideAtWarning(in, premium, saved, free, why)
}

// decideOverBudget is the decision when the context does not fit the
// available budget: compact with the deepest step, or let the window
// cut alone where the step would rewrite more than it is worth.
func (c cacheAware) decideOverBudget(in StrategyInput) Decision {
	b := in.Budget
	target := fraction(b.Available, c.target)
	deep := in.Deep
	if deep.Free <= 0 {
		return Decision{Compact: true, Target: target, Room: cutRoom(b.Available, target, in.Growth),
			Reason: fmt.Sprintf("cache: %d tokens do not fit the available %d; nothing left for the window to omit, down to %d (target %.2f)",
				b.CalibratedUsed, b.Available, target, c.target)}
	}
	after := b.CalibratedUsed - deep.Free
	reason := fmt.Sprintf("cache: %d tokens do not fit the available %d; the deepest step frees %d and keeps %d after its first change; %s",
		b.CalibratedUsed, b.Available, deep.Free, deep.Keep, turnsOfRoom(b.Available-after, in.Growth))
	room := cutRoom(b.Available, target, in.Growth)
	if after > b.Available && room > 0 && deep.Demonstrations == 0 {
		if before := growthBefore(in.Growth); before > 0 && room-deep.Free >= before {
			return Decision{Room: room - deep.Free,
				Reason: fmt.Sprintf("cache: %d tokens do not fit the available %d; the window must cut, and the cut the deepest step would need "+
					"(what is over after it and %d tokens more, a turn of the observed growth) leaves %d tokens free without the step, "+
					"at least a turn of the growth of %d observed before this turn; the step would rewrite %d tokens after its first change "+
					"to free %d, so the window cuts alone",
					b.CalibratedUsed, b.Available, room, room-deep.Free, before, deep.Keep, deep.Free)}
		}
	}
	if after > b.Available && room > 0 {
		reason += fmt.Sprintf("; the window must cut, and cuts %d tokens more: a turn of the observed growth", room)
	}
	return Decision{Compact: true, Deep: true, Target: min(target, after), Room: room, Reason: reason}
}

// decideBelowWarning is the decision under the warning line, free to
// speculate (why says why): the deepest step when it pays back by the
// next turn, or when it frees a turn of the growth for at most a turn's
// premium.
func decideBelowWarning(in StrategyInput, premium, saved float64, why string) Decision {
	b, deep := in.Budget, in.Deep
	if next := nextTurnSaving(in); less(premium-saved, next) {
		return Decision{Compact: true, Deep: true, Target: b.CalibratedUsed - deep.Free,
			Reason: fmt.Sprintf("cache: %s; utilization %.2f under warning %.2f; the deepest step frees %d tokens; "+
				"the %.0f units of writing instead of reading the %d it keeps after its first change, less the %.0f units fewer read this turn, "+
				"are paid back by the %.0f units fewer read on the next turn",
				why, b.Utilization, in.Thresholds.Warning, deep.Free, premium, deep.Keep, saved, next)}
	}
	if g := meanGrowth(in.Growth); g > 0 && deep.Free >= g {
		if turn := turnPremium(in.Pricing, g); premium <= turn {
			return Decision{Compact: true, Deep: true, Target: b.CalibratedUsed - deep.Free,
				Reason: fmt.Sprintf("cache: %s; utilization %.2f under warning %.2f; the deepest step frees %d tokens, "+
					"at least a turn of the observed growth of %d, and the %.0f units of writing instead of reading the %d it keeps after its first change "+
					"are at most the %.0f of writing a turn of that growth instead of reading it",
					why, b.Utilization, in.Thresholds.Warning, deep.Free, g, premium, deep.Keep, turn)}
		}
	}
	return Decision{}
}

// decideAtWarning is the decision at or over the warning line: the
// deepest step when it pays on this turn, by the next one (demonstrations
// ahead), or, free to speculate, within the turns left before the budget
// forces a compaction.
func decideAtWarning(in StrategyInput, premium, saved float64, free bool, why string) Decision {
	b, deep := in.Budget, in.Deep
	if less(premium, saved) {
		return Decision{Compact: true, Deep: true, Target: b.CalibratedUsed - deep.Free,
			Reason: fmt.Sprintf("cache: utilization %.2f >= warning %.2f; the deepest step frees %d tokens, %.0f units fewer read this turn, "+
				"more than the %.0f units of writing instead of reading the %d it keeps after its first change",
				b.Utilization, in.Thresholds.Warning, deep.Free, saved, premium, deep.Keep)}
	}
	if next := nextTurnSaving(in); deep.Demonstrations > 0 && less(premium-saved, next) {
		return Decision{Compact: true, Deep: true, Target: b.CalibratedUsed - deep.Free,
			Reason: fmt.Sprintf("cache: utilization %.2f >= warning %.2f; the deepest step omits %d tokens of demonstrations and frees %d tokens in all; "+
				"the %.0f units of writing instead of reading the %d it keeps after its first change, less the %.0f units fewer read this turn, "+
				"are paid back by the %.0f units fewer read on the next turn",
				b.Utilization, in.Thresholds.Warning, deep.Demonstrations, deep.Free, premium, deep.Keep, saved, next)}
	}
	h := paybackHorizon(in)
	if !free || h < 0 || premium > saved*float64(h+1) {
		return Decision{}
	}
	if n := recentTurns(in.Preserve); premium > turnPremium(in.Pricing, n*meanGrowth(in.Growth)) {
		return Decision{} // a spike among the recent messages: they leave the preserved ones within n turns
	}
	return Decision{Compact: true, Deep: true, Target: b.CalibratedUsed - deep.Free,
		Reason: fmt.Sprintf("cache: %s; utilization %.2f >= warning %.2f; the deepest step frees %d tokens, "+
			"%.0f units fewer read each turn, and the %.0f units of writing instead of reading the %d it keeps after its first change "+
			"are paid back within the %d turns left before the budget forces a compaction (%d tokens of room at the observed growth of %d)",
			why, b.Utilization, in.Thresholds.Warning, deep.Free, saved, premium, deep.Keep, h, b.Available-b.CalibratedUsed, meanGrowth(in.Growth))}
}

// recentTurns is how many turns of the observed growth the preserved
// recent turns hold (preserve_recent counts turns: an action with its
// observations; at least one).
func recentTurns(preserve int) int {
	return max(preserve, 1)
}

// creditMargin is what of the credit a speculative compaction leaves
// unspent under p (nil: Anthropic's prices): with a caching step over 1,
// a payload that only appends may read up to a step less than the
// unmanaged history's, which reads a longer prefix, and costs that much
// more on its turn.
func creditMargin(p *sdk.Pricing) float64 {
	q := pricingOrDefault(p)
	if q.Granularity <= 1 {
		return 0
	}
	return turnPremium(p, q.Granularity-1)
}

// less tells whether a is less than b by more than the rounding of the
// sums they come from (costs equal but for it are not less).
func less(a, b float64) bool {
	return a < b-1e-9*max(1, math.Abs(b))
}

// cutRoom is the room a forced compaction asks the window's cut to leave
// when it must cut: a turn of the observed growth, so that at that growth
// the next turn fits, but never below the target (0 when no growth was
// observed).
func cutRoom(available, target int, growth []int) int {
	return min(meanGrowth(growth), max(available-target, 0))
}

// paybackHorizon is the turns left before the context outgrows the
// available budget at the observed growth: the room left over the mean
// growth of the recent turns, rounded down; -1 when no growth was
// observed (no horizon can be justified).
func paybackHorizon(in StrategyInput) int {
	g := meanGrowth(in.Growth)
	if g <= 0 {
		return -1
	}
	return max(in.Budget.Available-in.Budget.CalibratedUsed, 0) / g
}

// turnsOfRoom says how many turns of the observed growth fit in room.
func turnsOfRoom(room int, growth []int) string {
	g := meanGrowth(growth)
	if g <= 0 {
		return fmt.Sprintf("%d tokens of room, no growth observed yet", room)
	}
	return fmt.Sprintf("%d tokens of room, %d turns at the observed growth of %d", room, room/g, g)
}

// growthBefore is the mean growth of the recent turns before the last,
// rounded up: the growth seen before this turn's (0 when fewer than two
// turns were observed).
func growthBefore(growth []int) int {
	if len(growth) < 2 {
		return 0
	}
	return meanGrowth(growth[:len(growth)-1])
}

// meanGrowth is the mean of the recent turns' growth, rounded up (0 when
// none was observed).
func meanGrowth(growth []int) int {
	if len(growth) == 0 {
		return 0
	}
	sum := 0
	for _, g := range growth {
		sum += g
	}
	return (sum + len(growth) - 1) / len(growth)
}

// nextTurnSaving is what the deepest step taken now saves on the next
// turn if that turn only appends: the previous payload read whole, with
// and without the tokens the step stops sending (what the next turn adds
// costs the same either way).
func nextTurnSaving(in StrategyInput) float64 {
	p := pricingOrDefault(in.Pricing)
	used := in.Budget.CalibratedUsed
	return p.Cost(used, used).Cost - p.Cost(used-in.Deep.Free, used-in.Deep.Free).Cost
}

// pricingOrDefault is p, or Anthropic's prices when p is nil (unknown).
func pricingOrDefault(p *sdk.Pricing) sdk.Pricing {
	if p == nil {
		return sdk.Pricing{Input: 1, CacheRead: 0.1, CacheWrite: 1.25, MinCacheable: 1024}
	}
	return *p
}

// turnPremium is what writing tokens costs over reading them under p
// (nil: Anthropic's prices).
func turnPremium(p *sdk.Pricing, tokens int) float64 {
	q := pricingOrDefault(p)
	write := q.CacheWrite
	if write == 0 {
		write = q.Input
	}
	return (write - q.CacheRead) * float64(tokens)
}

// speculativePremium prices the deepest step on this turn against only
// appending: premium is what writing costs over reading for the tokens it
// keeps after its first change, less those new this turn (written
// anyway), plus what the provider leaves unread of the prefix before the
// change (all of it under the cacheable minimum, else what is short of a
// whole caching step) less what it leaves unread of the prefix appending
// shares, when the session tells both (StrategyInput.Shared,
// DeepStep.Before; otherwise the prefix before the change is worked out
// from the counts, and appending's taken to leave nothing unread);
// nothing at all on a first turn, which nothing is cached for. saved is
// the read price of the tokens it stops sending. Later turns save as much again each, until the next compaction,
// but the run may end first: they are not counted.
func speculativePremium(in StrategyInput) (premium, saved float64) {
	p := pricingOrDefault(in.Pricing)
	write := p.CacheWrite
	if write == 0 {
		write = p.Input
	}
	saved = p.CacheRead * float64(in.Deep.Free)
	if in.Turns == 0 {
		return 0, saved
	}
	grown := 0
	if n := len(in.Growth); n > 0 {
		grown = in.Growth[n-1]
	}
	rewritten := max(in.Deep.Keep-grown, 0)
	if in.Shared > 0 && in.Deep.Before > 0 {
		// What the provider leaves unread of the prefix the step's payload
		// shares, over what it leaves unread of appending's.
		rewritten += unread(p, min(in.Deep.Before, in.Shared)) - unread(p, in.Shared)
		return (write - p.CacheRead) * float64(rewritten), saved
	}
	switch before := max(in.Budget.CalibratedUsed-in.Deep.Free-in.Deep.Keep, 0); {
	case before < p.MinCacheable:
		rewritten += before
	case p.Granularity > 1:
		rewritten += before % p.Granularity // read only in whole steps
	}
	return (write - p.CacheRead) * float64(rewritten), saved
}

// unread is what p leaves unread of a shared prefix of n tokens: all of
// it under the cacheable minimum, else what is short of a whole caching
// step.
func unread(p sdk.Pricing, n int) int {
	switch {
	case n < p.MinCacheable:
		return n
	case p.Granularity > 1:
		return n % p.Granularity
	}
	return 0
}
