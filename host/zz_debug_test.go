package host

import (
	"os"
	"testing"

	"github.com/ctxhost/ctxhost/sdk"
	"github.com/ctxhost/ctxhost/sdk/assembly"
)

type loggingStrategy struct {
	Strategy
	t *testing.T
}

func (l loggingStrategy) Decide(in StrategyInput) Decision {
	d := l.Strategy.Decide(in)
	prem, saved := speculativePremium(in)
	l.t.Logf("turn %d used %d avail %d util %.2f outgrown %v deep %+v growth %v premium %.0f saved %.0f -> compact %v %s", in.Turns, in.Budget.CalibratedUsed, in.Budget.Available, in.Budget.Utilization, in.Outgrown, in.Deep, in.Growth, prem, saved, d.Compact, d.Reason)
	return d
}

func TestZZDebug(t *testing.T) {
	pricing := map[string]sdk.Pricing{"openai": assembly.OpenAIPricing, "anthropic": assembly.AnthropicPricing, "gemini": assembly.GeminiPricing}[os.Getenv("P")]
	for _, run := range append(realRuns(t), runVariations(realRuns(t))...) {
		if run.name != os.Getenv("RUN") {
			continue
		}
		r := replayDeciding(t, run, 8000, StrategyCache, loggingStrategy{cacheAware{target: 0.5}, t}, &pricing)
		sum, un := 0.0, 0.0
		for i, c := range r.costs {
			sum += c
			un += r.unmanagedCosts[i]
			t.Logf("turn %d cost %.1f unm %.1f sum %.1f unsum %.1f fits %v", i+1, c, r.unmanagedCosts[i], sum, un, r.unmanagedFits[i])
		}
	}
}
