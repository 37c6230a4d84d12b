package engine

import (
	"context"
	"errors"
	"fmt"
	"os"
	"sync"

	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/hcl/v2"

	"github.com/ctxhost/ctxhost/config"
	"github.com/ctxhost/ctxhost/host"
	"github.com/ctxhost/ctxhost/host/plaintext"
	"github.com/ctxhost/ctxhost/internal/supervise"
	"github.com/ctxhost/ctxhost/pluginhost"
	"github.com/ctxhost/ctxhost/record"
	"github.com/ctxhost/ctxhost/sdk"
	"github.com/ctxhost/ctxhost/store"
)

// Plugin is one launched, configured and supervised context plugin.
type Plugin struct {
	Config     *config.Plugin
	Info       sdk.PluginInfo
	Supervisor *host.Supervisor
	Binding    host.PluginBinding
}

// Assembler is one running assembler: a supervised process, or a
// first-party one inside this process (Config.Builtin).
type Assembler struct {
	Config *config.Assembler
	Info   sdk.AssemblerInfo
	// Assembler is what turns are assembled with: Supervisor, or the
	// built-in assembler.
	Assembler host.Assembler
	// Supervisor keeps the assembler's process running; nil for a
	// built-in one.
	Supervisor *host.AssemblerSupervisor
	// Format is the format payloads are built in: the HCL's, or the first
	// one the assembler declares when the HCL leaves it out.
	Format string
}

// Engine is a running profile: its plugins and assemblers are up, and
// NewSession creates sessions that use them.
type Engine struct {
	Config  *config.Config
	Context *config.Context
	Logger  hclog.Logger
	core    *host.Host // the sessions' host: reached through the engine only
	// Plugins are the profile's running plugins, in the profile's order.
	Plugins []*Plugin
	// Unavailable are the profile's optional plugins that failed to
	// launch; the profile runs without them (see UnavailableWarnings).
	Unavailable []*UnavailablePlugin
	// Assemblers are the assemblers the profile and its agents use, by name.
	Assemblers map[string]*Assembler
	// Router assembles for the profile's default route and every agent.
	Router *Router

	sessionConfig host.Config
	viewer        *agentViewer // nil without agent blocks
	registry      *pluginhost.Registry
	closeOnce     sync.Once
	store         store.Store // nil without one; closed by Close
	// saved is where sessions are saved: store, or Options.Store; nil
	// without a store.
	saved record.Store
	// stopFeed ends the writing of host-wide events to the store's feed.
	stopFeed func()
	// blocks keeps the memory blocks (Options.Blocks, the store's, or
	// this process's memory).
	blocks record.BlockStore
	// stopSweep ends the checkpoint sweep this engine runs (nil: none).
	stopSweep func()
}

// Options tune Start.
type Options struct {
	// Context names the profile; empty means the first one.
	Context string
	// Logger is the host's logger (default: NewLogger from the host block,
	// to stderr).
	Logger hclog.Logger
	// IgnoreStore leaves the host block's store closed: sessions are not
	// saved (for commands that only look, such as inspect).
	IgnoreStore bool
	// Store, when set, is the store sessions are saved to instead of the
	// host block's (several engines of one process share one store this
	// way). The engine does not close it.
	Store record.Store
	// ReusePayloads declares that the caller is done with each turn's
	// payload before the next turn of the same agent (it writes each turn
	// out as it comes): a payload that grew may then be built in the memory
	// of the last one instead of a copy (host.Config.ReusePayload).
	ReusePayloads bool
	// Blocks, when set, keeps the memory blocks instead of the store's
	// own (engines of one process share one this way: BlockStoreOf).
	Blocks record.BlockStore
}

// Start launches profile opts.Context of cfg: every plugin and assembler it
// and its agents use, concurrently; checks their descriptions; decodes each
// plugin's config body against its schema (diagnostics are returned as a
// *ConfigError before any session exists); configures and supervises the
// plugins. On error everything launched is killed.
func Start(ctx context.Context, cfg *config.Config, opts Options) (*Engine, error) {
	c, err := SelectContext(cfg, opts.Context)
	if err != nil {
		return nil, err
	}
	sc, err := SessionConfig(cfg, c)
	if err != nil {
		return nil, err
	}
	sc.ReusePayload = opts.ReusePayloads
	logger := opts.Logger
	if logger == nil {
		logger = NewLogger(cfg.Host, os.Stderr)
	}
	var hs record.Store = opts.Store
	var st store.Store // opened here, closed by Close
	if hs == nil {
		if st, err = openStore(ctx, cfg.Host, opts.IgnoreStore); err != nil {
			return nil, err
		}
		if st != nil {
			hs = st
		}
	}
	hopts := host.Options{Logger: logger}
	if hs != nil {
		hopts.Recorders = journals{hs}
	}
	e := &Engine{Config: cfg, Context: c, Logger: logger, sessionConfig: sc, registry: &pluginhost.Registry{},
		core: host.New(hopts), Assemblers: map[string]*Assembler{}, store: st, saved: hs, blocks: opts.Blocks}
	if e.blocks == nil {
		e.blocks = BlockStoreOf(hs)
	}
	e.stopFeed = e.publishHostEvents()
	if err := e.start(ctx); err != nil {
		e.Close()
		return nil, err
	}
	if err := e.seedProfileMemory(ctx); err != nil {
		e.Close()
		return nil, err
	}
	if !opts.IgnoreStore {
		e.startSweep()
	}
	return e, nil
}

func (e *Engine) start(ctx context.Context) error {
	plugins := profilePlugins(e.Config, e.Context)
	assemblers := usedAssemblers(e.Config, e.Context)
	retry := make([]bool, len(plugins)+len(assemblers))
	for i, p := range plugins {
		retry[i] = !p.Required
	}
	results := e.launchEach(ctx, launchSpecs(plugins, assemblers, e.Logger), retry)
	var fatal []error
	var launched []*config.Plugin
	var running []launchResult
	for i, p := range plugins {
		r := results[i]
		switch {
		case r.err == nil:
			launched = append(launched, p)
			running = append(running, r)
		case p.Required:
			fatal = append(fatal, fmt.Errorf("required plugin %q (%s) failed to start: %w", p.Name, p.RunsFrom(), r.err))
		default:
			u := &UnavailablePlugin{Config: p, Err: r.err, Attempts: r.attempts}
			e.Unavailable = append(e.Unavailable, u)
			e.Logger.Warn("optional plugin failed to start; running without it", "plugin", p.Name, "path", p.Path, "error", r.err)
		}
	}
	for i, asm := range assemblers {
		r := results[len(plugins)+i]
		if r.err != nil {
			fatal = append(fatal, fmt.Errorf("assembler %q (%s) failed to start: %w", asm.Name, asm.RunsFrom(), r.err))
			continue
		}
		if r.client == nil { // built in: nothing to supervise
			e.Assemblers[asm.Name] = &Assembler{Config: asm, Info: r.assembler.Info(), Assembler: r.assembler}
			continue
		}
		sup, err := e.superviseAssembler(ctx, asm, r.client.Assembler)
		if err != nil {
			fatal = append(fatal, err)
			continue
		}
		e.Assemblers[asm.Name] = &Assembler{Config: asm, Info: sup.Info(), Assembler: sup, Supervisor: sup}
	}
	if err := errors.Join(fatal...); err != nil {
		return fmt.Errorf("launch plugins: %w", err)
	}
	clients := make([]host.ContextPlugin, len(running))
	for i, r := range running {
		clients[i] = r.plugin
	}
	configs, diags := DecodeConfigs(launched, clients)
	infos := map[string]sdk.AssemblerInfo{}
	for _, asm := range assemblers {
		la := e.Assemblers[asm.Name]
		var d hcl.Diagnostics
		la.Format, d = resolveFormat(asm, la.Info)
		diags = append(diags, d...)
		infos[asm.Name] = la.Info
	}
	diags = append(diags, checkAgentFormats(e.Config.Agents, infos)...)
	if diags.HasErrors() {
		return &ConfigError{Diags: diags}
	}
	for i, p := range launched {
		check := host.PluginBinding{Name: p.Name, Plugin: clients[i], Priority: p.Priority, Compactable: p.Compactable}
		if err := host.CheckBinding(check); err != nil {
			if p.Required {
				return fmt.Errorf("required plugin %q (%s): %w", p.Name, p.RunsFrom(), err)
			}
			running[i].kill()
			e.Unavailable = append(e.Unavailable, &UnavailablePlugin{Config: p, Err: err})
			e.Logger.Warn("optional plugin cannot be bound; running without it", "plugin", p.Name, "error", err)
			continue
		}
		lp, err := e.supervise(ctx, p, clients[i], configs[i])
		if err != nil {
			return err
		}
		e.Plugins = append(e.Plugins, lp)
	}
	e.Router = e.buildRouter()
	viewer, err := e.newViewer()
	if err != nil {
		return err
	}
	e.viewer = viewer
	if e.sessionConfig.Summary, err = e.summaryConfig(); err != nil {
		return err
	}
	return nil
}

// supervise wraps an already launched plugin in a Supervisor (relaunching
// through the registry after a crash) and configures it.
func (e *Engine) supervise(ctx context.Context, p *config.Plugin, first host.ContextPlugin, cfgJSON []byte) (*Plugin, error) {
	var once sync.Once
	spec := pluginSpec(p, e.Logger)
	launch := func(ctx context.Context) (host.ContextPlugin, error) {
		var cp host.ContextPlugin
		once.Do(func() { cp = first })
		if cp != nil {
			return cp, nil
		}
		if p.Builtin != "" { // a fresh instance; the supervisor puts the sessions' state back
			return newBuiltinPlugin(p.Name, p.Builtin)
		}
		cl, err := e.registry.Launch(ctx, spec)
		if err != nil {
			return nil, err
		}
		return cl.Context, nil
	}
	sup, err := e.core.Supervise(ctx, p.Name, launch, supervise.Options{Logger: e.Logger.Named(p.Name), RestoreTimeout: p.RestoreTimeout,
		OnRestart: func(name string, cause error) { e.Logger.Warn("plugin restarted", "plugin", name, "cause", cause) }})
	if err != nil {
		return nil, err
	}
	if err := sup.Configure(ctx, cfgJSON); err != nil {
		rng := p.Range("config")
		return nil, &ConfigError{Diags: hcl.Diagnostics{{Severity: hcl.DiagError,
			Summary: fmt.Sprintf("plugin %q rejected its config", p.Name), Detail: err.Error(), Subject: &rng}}}
	}
	return &Plugin{Config: p, Info: sup.Info(), Supervisor: sup, Binding: host.PluginBinding{
		Name: p.Name, Plugin: sup, Priority: p.Priority, Compactable: p.Compactable,
		Required: p.Required, Timeout: p.Timeout, MaxComponentBytes: p.MaxComponentBytes, KeepAtLeast: p.KeepAtLeast}}, nil
}

// superviseAssembler wraps an already launched assembler in an
// AssemblerSupervisor: a dead process is launched again through the
// registry, with its delta streams reset (the new process holds none).
func (e *Engine) superviseAssembler(ctx context.Context, asm *config.Assembler, first *pluginhost.AssemblerClient) (*host.AssemblerSupervisor, error) {
	var once sync.Once
	spec := assemblerSpec(asm, e.Logger)
	spec.Deltas = first.Deltas()
	launch := func(ctx context.Context) (host.Assembler, error) {
		var ac host.Assembler
		once.Do(func() { ac = first })
		if ac != nil {
			return ac, nil
		}
		if spec.Deltas != nil {
			spec.Deltas.Reset()
		}
		cl, err := e.registry.Launch(ctx, spec)
		if err != nil {
			return nil, err
		}
		return cl.Assembler, nil
	}
	return e.core.SuperviseAssembler(ctx, asm.Name, launch, supervise.Options{Logger: e.Logger.Named(asm.Name),
		OnRestart: func(name string, cause error) {
			e.Logger.Warn("assembler restarted", "assembler", name, "cause", cause)
		}})
}

// buildRouter routes the profile's payloads to its assembler and each
// agent's to the agent's; without one, the built-in plain-text assembler is
// used with a warning.
func (e *Engine) buildRouter() *Router {
	def := e.route(e.Context.Assembler, "")
	if e.Context.Assembler == "" {
		e.Logger.Warn("context has no assembler; using the plain-text fallback", "context", e.Context.Name)
	}
	r := NewRouter(def)
	for _, ag := range e.Config.Agents {
		if ag.Assembler == "" {
			e.Logger.Warn("agent has no assembler; using the plain-text fallback", "agent", ag.Name, "agent_type", ag.Type)
		}
		r.SetAgent(ag.Name, e.route(ag.Assembler, ag.Format))
	}
	return r
}

func (e *Engine) route(name, format string) Route {
	asm, ok := e.Assemblers[name]
	if !ok {
		return Route{Assembler: plaintext.New(), Format: "text"}
	}
	if format == "" {
		format = asm.Format
	}
	return Route{Assembler: asm.Assembler, Format: format, Options: asm.Config.Options}
}

// SessionConfig returns the host.Config of the profile's sessions: model,
// strategy, history, every plugin binding and the routing assembler.
func (e *Engine) SessionConfig() host.Config {
	sc := e.sessionConfig
	for _, p := range e.Plugins {
		sc.Plugins = append(sc.Plugins, p.Binding)
	}
	sc.Assembler = e.Router
	if e.viewer != nil {
		sc.Viewer = e.viewer
	}
	sc.Format = e.Router.def.Format
	sc.AssemblerOptions = e.Router.def.Options
	if asm, ok := e.Assemblers[e.Context.Assembler]; ok {
		sc.AssemblerTimeout = asm.Config.Timeout
	}
	if m := e.Config.Model(e.Context.Model); m != nil && m.Pricing != nil {
		f, _ := e.Router.Info().Format(sc.Format)
		sc.Pricing = pricing(m.Pricing, f.Pricing)
	}
	return sc
}

// pricing is the assembler's default price model with the attributes the
// model's pricing block sets (no default: plain input pricing, no cache).
func pricing(hcl *config.Pricing, def *sdk.Pricing) *sdk.Pricing {
	p := sdk.Pricing{Input: 1}
	if def != nil {
		p = *def
	}
	if hcl.IsSet("input") {
		p.Input = hcl.Input
	}
	if hcl.IsSet("cache_read") {
		p.CacheRead = hcl.CacheRead
	}
	if hcl.IsSet("cache_write") {
		p.CacheWrite = hcl.CacheWrite
	}
	if hcl.IsSet("min_cacheable") {
		p.MinCacheable = hcl.MinCacheable
	}
	if hcl.IsSet("granularity") {
		p.Granularity = hcl.Granularity
	}
	return &p
}

// NewSession creates session id with the profile's configuration, its
// system prompt and its instructions. With a store holding state for id it
// fails with an error wrapping record.ErrStored (see OpenSession).
func (e *Engine) NewSession(id string) (*Session, error) {
	s, err := e.core.NewSession(id, e.SessionConfig())
	if err != nil {
		return nil, fmt.Errorf("new session %q: %w", id, err)
	}
	if err := e.initSession(s); err != nil {
		return nil, err
	}
	if err := e.seedMemory(context.Background(), id, ""); err != nil {
		return nil, err
	}
	return e.wrap(s)
}

// Close kills every process the engine launched. It is safe to call twice.
func (e *Engine) Close() {
	e.closeOnce.Do(func() {
		if e.stopSweep != nil {
			e.stopSweep()
		}
		e.registry.KillAll()
		if e.stopFeed != nil {
			e.stopFeed()
		}
		if e.store != nil {
			if err := e.store.Close(); err != nil {
				e.Logger.Warn("close the session store", "error", err)
			}
		}
	})
}

// KillOnSignal kills every launched process on SIGINT or SIGTERM and then
// calls then (nil: exit as the signal would). Call stop to uninstall.
func (e *Engine) KillOnSignal(then func(os.Signal)) (stop func()) {
	return e.registry.KillOnSignal(then)
}

// IsConfigError reports whether err is a configuration problem.
func IsConfigError(err error) bool {
	var ce *ConfigError
	return errors.As(err, &ce)
}
