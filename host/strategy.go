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
	// DropFirst is how many tokens omitting the demonstrations (the
	// history's DropFirst kinds) would free now; Pricing the provider's
	// prompt-caching prices (nil: unknown); Turns the prepares so far.
	DropFirst int
	Pricing   *sdk.Pricing
	Turns     int
}

// Decision is a strategy's answer.
type Decision struct {
	// MaskHistory asks the history to mask this many of its oldest tool
	// outputs before anything else (graduated strategy, seed 001).
	MaskHistory int
	// Compact runs the compaction pipeline down to Target calibrated tokens.
	Compact bool
	Target  int
	Reason  string
	// LateFirst asks the history to change the latest bytes it can
	// (history.CompactLate), keeping the cached prompt prefix long.
	LateFirst bool
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

// graduated follows seed 001: in the Mask zone and above, mask the oldest
// history tool outputs in batches; it never compacts plugins, and runs the
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

// cacheAware compacts only when the context no longer fits, or, from the
// warning threshold on, to drop the demonstrations when what that saves
// over the coming turns exceeds the prefix it rewrites; a compaction is
// one large step down to the target: with prompt caching a turn that only
// appends pays a tenth for what it repeats, while a compaction pays full
// price (or more, with a cache write) for everything after the first byte
// it changes, so compacting early or in small steps costs more than it
// saves. The decision and the estimate are in the reason.
type cacheAware struct{ target float64 }

func (cacheAware) Name() string { return StrategyCache }

func (c cacheAware) Decide(in StrategyInput) Decision {
	b := in.Budget
	target := fraction(b.Available, c.target)
	if d := in.DropFirst; b.CalibratedUsed > b.Available && d > 0 && b.CalibratedUsed-d <= b.Available {
		return Decision{Compact: true, Target: b.CalibratedUsed - d,
			Reason: fmt.Sprintf("cache: %d tokens do not fit the available %d; dropping the %d demonstration tokens is one step that makes them fit", b.CalibratedUsed, b.Available, d)}
	}
	if b.CalibratedUsed > b.Available {
		return Decision{Compact: true, Target: target, LateFirst: true,
			Reason: fmt.Sprintf("cache: %d tokens do not fit the available %d; one step down to %d (target %.2f): "+
				"at most %d tokens written again once, then %d fewer tokens sent on every later turn, which only appends",
				b.CalibratedUsed, b.Available, target, c.target, target, b.CalibratedUsed-target)}
	}
	if d := in.DropFirst; d > 0 && b.Utilization >= in.Thresholds.Warning {
		// Under pressure, dropping the demonstrations rewrites what
		// follows them once and saves reading them on every later turn.
		rewrite, save := c.dropEstimate(in, d)
		if save > rewrite {
			return Decision{Compact: true, Target: b.CalibratedUsed - d,
				Reason: fmt.Sprintf("cache: dropping %d demonstration tokens now costs about %.0f units of rewritten prefix and saves about %.0f over the next %d turns",
					d, rewrite, save, cacheHorizon(in.Turns))}
		}
	}
	return Decision{}
}

// cacheHorizon is the number of turns a saving is counted over: as many as
// the session has had so far (a run tends to last as long again), at least
// 4 and at most 50.
func cacheHorizon(turns int) int { return min(max(turns, 4), 50) }

// dropEstimate prices dropping d tokens at the start of the history: the
// rest of the context is written again once (at the write price instead of
// the read price; nothing at all on a first turn, which nothing is cached
// for), and every later turn reads d fewer tokens.
func (c cacheAware) dropEstimate(in StrategyInput, d int) (rewrite, save float64) {
	p := sdk.Pricing{Input: 1, CacheRead: 0.1, CacheWrite: 1.25} // Anthropic's, when unknown
	if in.Pricing != nil {
		p = *in.Pricing
	}
	write := p.CacheWrite
	if write == 0 {
		write = p.Input
	}
	if in.Turns > 0 {
		rewrite = (write - p.CacheRead) * float64(in.Budget.CalibratedUsed-d)
	}
	save = p.CacheRead * float64(d) * float64(cacheHorizon(in.Turns))
	return rewrite, save
}
