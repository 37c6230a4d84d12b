package engine

import (
	"fmt"

	"github.com/ctxhost/ctxhost/config"
	"github.com/ctxhost/ctxhost/host"
	"github.com/ctxhost/ctxhost/host/history"
)

// SelectContext returns the context profile named name, or the first one
// declared when name is empty. A missing profile is a *ConfigError.
func SelectContext(cfg *config.Config, name string) (*config.Context, error) {
	if name == "" {
		if len(cfg.Contexts) == 0 {
			return nil, configErrorf(nil, "no context profile", `the configuration declares no context "NAME" block`)
		}
		return cfg.Contexts[0], nil
	}
	if c := cfg.Context(name); c != nil {
		return c, nil
	}
	names := make([]string, 0, len(cfg.Contexts))
	for _, c := range cfg.Contexts {
		names = append(names, c.Name)
	}
	return nil, configErrorf(nil, fmt.Sprintf("unknown context profile %q", name), fmt.Sprintf("declared profiles: %v", names))
}

// SessionConfig builds the host.Config of profile c from its model,
// strategy and history settings. Plugins and the assembler are left for
// the caller to fill in.
func SessionConfig(cfg *config.Config, c *config.Context) (host.Config, error) {
	m := cfg.Model(c.Model)
	if m == nil {
		rng := c.Range("model")
		return host.Config{}, configErrorf(&rng, fmt.Sprintf("unknown model %q", c.Model), "")
	}
	preserve := c.History.PreserveRecent
	if preserve == 0 {
		preserve = -1 // history reads 0 as its default; -1 preserves none
	}
	priority := c.History.Priority
	return host.Config{
		Window:     m.ContextWindow,
		Reserved:   m.ReservedForResponse,
		Encoding:   m.Encoding,
		Thresholds: host.Thresholds{Warning: c.Strategy.WarningThreshold, Critical: c.Strategy.CriticalThreshold},
		Strategy: host.StrategyConfig{
			Name:           c.Strategy.Type,
			Target:         c.Strategy.Target,
			CarryoverTurns: c.Strategy.CarryoverTurns,
			MinFree:        c.Strategy.MinFree,
		},
		History: host.HistoryConfig{
			Options:  history.Options{PreserveRecent: preserve, DropFirst: !c.History.KeepFirst, Infer: c.History.Infer, Policy: kindPolicy(c.History.Kinds)},
			Priority: &priority,
		},
		FailOnUnmetTarget: c.FailOnUnmetTarget,
		AllowOverWindow:   c.AllowOverWindow,
		RecallTool:        c.History.RecallTool,
		OwnTools:          ownTools(c),
		Facts:             factsConfig(c.Facts),
	}, nil
}

// kindPolicy turns the history `kinds` attribute into a history.Policy
// (nil: the defaults).
func kindPolicy(kinds map[string]string) history.Policy {
	if len(kinds) == 0 {
		return nil
	}
	p := history.Policy{}
	for kind, rule := range kinds {
		switch rule {
		case config.KindMask:
			p[kind] = history.KindRule{Mask: true}
		case config.KindPin:
			p[kind] = history.KindRule{Pin: true}
		case config.KindDropFirst:
			p[kind] = history.KindRule{DropFirst: true}
		default: // omit: the sliding window only
			p[kind] = history.KindRule{}
		}
	}
	return p
}

// factsConfig turns a `facts` block into host.FactsConfig (max_tokens 0:
// the placeholders' digests alone).
func factsConfig(f config.Facts) host.FactsConfig {
	if !f.Enabled {
		return host.FactsConfig{}
	}
	maxTokens := f.MaxTokens
	if maxTokens == 0 {
		maxTokens = -1
	}
	return host.FactsConfig{Enabled: true, MaxTokens: maxTokens, Share: f.Share}
}
