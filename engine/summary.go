package engine

import (
	"fmt"

	"github.com/ctxhost/ctxhost/config"
	"github.com/ctxhost/ctxhost/host"
	"github.com/ctxhost/ctxhost/sdk"
	"github.com/ctxhost/ctxhost/summarizer"
)

// summaryConfig is the profile's summarize block as host.SummaryConfig:
// the summarizer block's model (one Limiter for the profile's sessions),
// or the bound plugin with the summarize capability. Zero without a
// summarize block.
func (e *Engine) summaryConfig() (host.SummaryConfig, error) {
	b := e.Context.Summarize
	if !b.Enabled {
		return host.SummaryConfig{}, nil
	}
	sc := host.SummaryConfig{MaxTokens: b.MaxTokens, Wait: b.Wait, WaitTimeout: b.WaitTimeout, ToolOutputTokens: b.ToolOutputTokens}
	if b.Plugin != "" {
		for _, p := range e.Plugins {
			if p.Config.Name != b.Plugin {
				continue
			}
			sum, ok := p.Binding.Plugin.(host.Summarizer)
			if !ok || !p.Info.HasCapability(sdk.CapSummarize) {
				rng := b.Range("plugin")
				return host.SummaryConfig{}, configErrorf(&rng, fmt.Sprintf("plugin %q cannot summarize", b.Plugin),
					fmt.Sprintf("its capabilities are %v; a summarizer plugin implements sdk.Summarizer (capability %q)", p.Info.Capabilities, sdk.CapSummarize))
			}
			sc.Summarizer, sc.Name = sum, b.Plugin
			sc.Timeout = p.Binding.Timeout
			return sc, nil
		}
		rng := b.Range("plugin")
		return host.SummaryConfig{}, configErrorf(&rng, fmt.Sprintf("plugin %q is not running", b.Plugin), "the summarize block names a plugin this profile does not bind, or one that failed to start")
	}
	blk := e.Config.Summarizer(b.Summarizer)
	if blk == nil {
		rng := b.Range("summarizer")
		return host.SummaryConfig{}, configErrorf(&rng, fmt.Sprintf("unknown summarizer %q", b.Summarizer), "")
	}
	m, err := summarizer.New(summarizerConfig(blk))
	if err != nil {
		return host.SummaryConfig{}, configErrorf(&blk.DeclRange, err.Error(), "")
	}
	sc.Summarizer, sc.Name, sc.Timeout = m, blk.Name, blk.Timeout
	if sc.MaxTokens == 0 {
		sc.MaxTokens = blk.MaxTokens
	}
	sc.Limiter = host.NewLimiter(blk.Concurrency)
	sc.InputPrice, sc.OutputPrice = blk.InputPrice, blk.OutputPrice
	return sc, nil
}

// summarizerConfig is a summarizer block as summarizer.Config.
func summarizerConfig(b *config.Summarizer) summarizer.Config {
	return summarizer.Config{Name: b.Name, Kind: b.Kind, BaseURL: b.BaseURL, Model: b.Model, Prompt: b.Prompt,
		Timeout: b.Timeout, KeyEnv: b.APIKeyEnv, CallerKey: b.CallerKey}
}
