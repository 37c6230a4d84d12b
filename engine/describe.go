package engine

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/hcl/v2"

	"github.com/ctxhost/ctxhost/config"
	"github.com/ctxhost/ctxhost/host"
	"github.com/ctxhost/ctxhost/pluginhost"
	"github.com/ctxhost/ctxhost/sdk"
)

// PluginDescription is what a configured context plugin declared, with the
// HCL's overrides applied.
type PluginDescription struct {
	Config      *config.Plugin
	Info        sdk.PluginInfo
	Priority    int  // effective: the HCL override or the declared one
	Compactable bool // effective
	// Unavailable is set when the plugin is optional and failed to launch
	// (Info is then empty).
	Unavailable error
}

// AssemblerDescription is what a configured assembler declared.
type AssemblerDescription struct {
	Config *config.Assembler
	Info   sdk.AssemblerInfo
	// Format is the effective format: the HCL's, or the first declared.
	Format string
}

// Describe launches every configured plugin and assembler concurrently,
// collects their descriptions, checks every plugin's config body against
// its schema and every assembler and agent format against the formats the
// assembler declares (a *ConfigError listing every problem) and kills them
// all. An optional plugin that fails to launch is described as Unavailable; any
// other launch failure is an error.
func Describe(ctx context.Context, cfg *config.Config, logger hclog.Logger) ([]PluginDescription, []AssemblerDescription, error) {
	e := &Engine{registry: &pluginhost.Registry{}}
	defer e.registry.KillAll()
	results := e.launchEach(ctx, launchSpecs(cfg.Plugins, cfg.Assemblers, logger), make([]bool, len(cfg.Plugins)+len(cfg.Assemblers)))
	var fatal []error
	var launched []*config.Plugin
	var clients []host.ContextPlugin
	plugins := make([]PluginDescription, len(cfg.Plugins))
	for i, p := range cfg.Plugins {
		r := results[i]
		plugins[i] = PluginDescription{Config: p}
		switch {
		case r.err == nil:
			launched = append(launched, p)
			clients = append(clients, r.plugin)
		case p.Required:
			fatal = append(fatal, fmt.Errorf("required plugin %q (%s) failed to start: %w", p.Name, p.RunsFrom(), r.err))
		default:
			plugins[i].Unavailable = r.err
		}
	}
	assemblers := make([]AssemblerDescription, len(cfg.Assemblers))
	for i, asm := range cfg.Assemblers {
		r := results[len(cfg.Plugins)+i]
		if r.err != nil {
			fatal = append(fatal, fmt.Errorf("assembler %q (%s) failed to start: %w", asm.Name, asm.RunsFrom(), r.err))
			continue
		}
		assemblers[i] = AssemblerDescription{Config: asm, Info: r.assembler.Info()}
	}
	if err := errors.Join(fatal...); err != nil {
		return nil, nil, fmt.Errorf("launch plugins: %w", err)
	}
	_, diags := DecodeConfigs(launched, clients)
	infos := map[string]sdk.AssemblerInfo{}
	for i := range assemblers {
		d := &assemblers[i]
		var fd hcl.Diagnostics
		d.Format, fd = resolveFormat(d.Config, d.Info)
		diags = append(diags, fd...)
		infos[d.Config.Name] = d.Info
	}
	diags = append(diags, checkAgentFormats(cfg.Agents, infos)...)
	if diags.HasErrors() {
		return nil, nil, &ConfigError{Diags: diags}
	}
	for i, p := range launched {
		d := &plugins[slices.Index(cfg.Plugins, p)]
		info := clients[i].Info()
		d.Info, d.Priority, d.Compactable = info, info.Priority, info.Compactable
		if p.Priority != nil {
			d.Priority = *p.Priority
		}
		if p.Compactable != nil {
			d.Compactable = *p.Compactable
		}
	}
	return plugins, assemblers, nil
}
