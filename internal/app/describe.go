package app

import (
	"context"
	"fmt"

	"github.com/hashicorp/go-hclog"

	"github.com/ctxhost/ctxhost/config"
	"github.com/ctxhost/ctxhost/host/pluginhost"
	"github.com/ctxhost/ctxhost/sdk"
)

// PluginDescription is what a configured context plugin declared, with the
// HCL's overrides applied.
type PluginDescription struct {
	Config      *config.Plugin
	Info        sdk.PluginInfo
	Priority    int  // effective: the HCL override or the declared one
	Compactable bool // effective
}

// AssemblerDescription is what a configured assembler declared.
type AssemblerDescription struct {
	Config *config.Assembler
	Info   sdk.AssemblerInfo
}

// Describe launches every configured plugin and assembler concurrently,
// collects their descriptions, checks every plugin's config body against
// its schema (a *ConfigError when one is wrong) and kills them all.
func Describe(ctx context.Context, cfg *config.Config, logger hclog.Logger) ([]PluginDescription, []AssemblerDescription, error) {
	var reg pluginhost.Registry
	defer reg.KillAll()
	clients, err := reg.LaunchAll(ctx, Specs(cfg.Plugins, cfg.Assemblers, logger))
	if err != nil {
		return nil, nil, fmt.Errorf("launch plugins: %w", err)
	}
	if _, diags := DecodeConfigs(cfg.Plugins, clients[:len(cfg.Plugins)]); diags.HasErrors() {
		return nil, nil, &ConfigError{Diags: diags}
	}
	plugins := make([]PluginDescription, len(cfg.Plugins))
	for i, p := range cfg.Plugins {
		info := clients[i].Context.Info()
		d := PluginDescription{Config: p, Info: info, Priority: info.Priority, Compactable: info.Compactable}
		if p.Priority != nil {
			d.Priority = *p.Priority
		}
		if p.Compactable != nil {
			d.Compactable = *p.Compactable
		}
		plugins[i] = d
	}
	assemblers := make([]AssemblerDescription, len(cfg.Assemblers))
	for i, a := range cfg.Assemblers {
		assemblers[i] = AssemblerDescription{Config: a, Info: clients[len(cfg.Plugins)+i].Assembler.Info()}
	}
	return plugins, assemblers, nil
}
