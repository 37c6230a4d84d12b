package engine

import (
	"encoding/json"
	"sort"

	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/hcl/v2"

	"github.com/ctxhost/ctxhost/config"
	"github.com/ctxhost/ctxhost/host"
	"github.com/ctxhost/ctxhost/pluginhost"
)

// launchSpec is what starts one plugin or assembler: a process (Spec),
// or, when builtin is set, the first-party one of that name in this
// process.
type launchSpec struct {
	pluginhost.Spec
	builtin string
}

// launchSpecs returns the launch specs of plugins, then assemblers, in
// order.
func launchSpecs(plugins []*config.Plugin, assemblers []*config.Assembler, logger hclog.Logger) []launchSpec {
	specs := make([]launchSpec, 0, len(plugins)+len(assemblers))
	for _, p := range plugins {
		specs = append(specs, launchSpec{pluginSpec(p, logger), p.Builtin})
	}
	for _, a := range assemblers {
		specs = append(specs, launchSpec{assemblerSpec(a, logger), a.Builtin})
	}
	return specs
}

func assemblerSpec(a *config.Assembler, logger hclog.Logger) pluginhost.Spec {
	return pluginhost.Spec{Name: a.Name, Kind: pluginhost.KindAssembler, Path: a.Path,
		SHA256: a.SHA256, Logger: logger, NoAutoMTLS: !a.AutoMTLS, Env: envList(a.Env)}
}

func pluginSpec(p *config.Plugin, logger hclog.Logger) pluginhost.Spec {
	return pluginhost.Spec{Name: p.Name, Kind: pluginhost.KindContext, Path: p.Path, SHA256: p.SHA256,
		Logger: logger, NoAutoMTLS: !p.AutoMTLS, Env: envList(p.Env)}
}

// envList is env as KEY=VALUE entries, sorted by key.
func envList(env map[string]string) []string {
	keys := make([]string, 0, len(env))
	for k := range env {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	out := make([]string, len(keys))
	for i, k := range keys {
		out[i] = k + "=" + env[k]
	}
	return out
}

// DecodeConfigs decodes each plugin's config body against the schema its
// running plugin declared; running[i] is plugins[i]'s. Every problem of
// every plugin is returned at once.
func DecodeConfigs(plugins []*config.Plugin, running []host.ContextPlugin) ([]json.RawMessage, hcl.Diagnostics) {
	out := make([]json.RawMessage, len(plugins))
	var diags hcl.Diagnostics
	for i, p := range plugins {
		info := running[i].Info()
		js, d := config.DecodePluginConfig(p.Config, info.ConfigSchema, p.EvalContext)
		diags = append(diags, d...)
		out[i] = js
	}
	return out, diags
}

// profilePlugins returns the plugins profile c uses, in its order.
func profilePlugins(cfg *config.Config, c *config.Context) []*config.Plugin {
	out := make([]*config.Plugin, 0, len(c.Plugins))
	for _, name := range c.Plugins {
		if p := cfg.Plugin(name); p != nil {
			out = append(out, p)
		}
	}
	return out
}

// usedAssemblers returns the assemblers profile c and the agents use, in
// declaration order, each once.
func usedAssemblers(cfg *config.Config, c *config.Context) []*config.Assembler {
	used := map[string]bool{c.Assembler: c.Assembler != ""}
	for _, ag := range cfg.Agents {
		if ag.Assembler != "" {
			used[ag.Assembler] = true
		}
	}
	var out []*config.Assembler
	for _, a := range cfg.Assemblers {
		if used[a.Name] {
			out = append(out, a)
		}
	}
	return out
}
