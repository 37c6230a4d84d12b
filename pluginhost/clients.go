package pluginhost

import (
	"context"
	"encoding/json"
	"fmt"
	"os/exec"
	"time"

	"github.com/ctxhost/ctxhost/host"
	"github.com/ctxhost/ctxhost/internal/wire"
	"github.com/ctxhost/ctxhost/sdk"
	"github.com/hashicorp/go-plugin"
)

// Interface guards: the remote clients and the SDK's in-process runners
// are interchangeable behind the host's interfaces.
var (
	_ host.ContextPlugin = (*ContextClient)(nil)
	_ host.StateCarrier  = (*ContextClient)(nil)
	_ host.Aborter       = (*ContextClient)(nil)
	_ host.StateCarrier  = (*sdk.LocalPlugin)(nil)
	_ host.Assembler     = (*AssemblerClient)(nil)
	_ host.ContextPlugin = (*sdk.LocalPlugin)(nil)
	_ host.Assembler     = (*sdk.LocalAssembler)(nil)
)

// Process is a running plugin process.
type Process struct {
	name, path string
	pc         *plugin.Client
	cmd        *exec.Cmd
	shutdown   time.Duration // graceful shutdown bound; 0: the default
}

// Name is the plugin's configured name.
func (p *Process) Name() string { return p.name }

// Path is the plugin binary.
func (p *Process) Path() string { return p.path }

// Exited reports whether the process has exited.
func (p *Process) Exited() bool { return p.pc.Exited() }

// Kill ends the process: gracefully if it answers within the spec's
// ShutdownTimeout, with SIGKILL otherwise. It always returns within about
// twice that bound, even when the plugin hangs.
func (p *Process) Kill() {
	bound := p.shutdown
	if bound <= 0 {
		bound = defaultShutdownTimeout
	}
	done := make(chan struct{})
	go func() { p.pc.Kill(); close(done) }()
	select {
	case <-done:
		return
	case <-time.After(bound):
	}
	p.sigkill()
	select { // go-plugin's own clean-up; the process is gone either way
	case <-done:
	case <-time.After(bound):
	}
}

// Abort kills the process with SIGKILL at once (host.Aborter): nothing it
// was doing can take effect afterwards.
func (p *Process) Abort() {
	p.sigkill()
	p.Kill()
}

func (p *Process) sigkill() {
	if p.cmd != nil && p.cmd.Process != nil {
		_ = p.cmd.Process.Kill()
	}
}

// Close kills the process; it always returns nil.
func (p *Process) Close() error {
	p.Kill()
	return nil
}

// wrap names the plugin and the call in err; a transport failure or an
// exited process wraps host.ErrPluginDead, a plugin's error keeps its SDK
// sentinel (errors.Is) and message.
func (p *Process) wrap(call string, err error) error {
	if err == nil {
		return nil
	}
	if wire.IsTransportFailure(err) || p.pc.Exited() {
		return fmt.Errorf("plugin %q: %s: %w: %v", p.name, call, host.ErrPluginDead, err)
	}
	return fmt.Errorf("plugin %q: %s: %w", p.name, call, err)
}

// ContextClient is a context plugin process behind host.ContextPlugin.
type ContextClient struct {
	*Process
	remote *sdk.RemotePlugin
	info   sdk.PluginInfo
}

// Info returns the description the plugin gave at launch.
func (c *ContextClient) Info() sdk.PluginInfo { return c.info }

// bind returns ctx carrying the binding name: the caller's (sdk.WithBinding)
// or else the plugin's configured name, which is its HCL label.
func (c *ContextClient) bind(ctx context.Context) context.Context {
	if sdk.Binding(ctx) != "" {
		return ctx
	}
	return sdk.WithBinding(ctx, c.name)
}

// Configure implements host.ContextPlugin.
func (c *ContextClient) Configure(ctx context.Context, config json.RawMessage) error {
	return c.wrap("Configure", c.remote.Configure(c.bind(ctx), config))
}

// Component implements host.ContextPlugin.
func (c *ContextClient) Component(ctx context.Context, session, encoding string) (*sdk.Component, error) {
	comp, err := c.remote.Component(c.bind(ctx), session, encoding)
	return comp, c.wrap("Component", err)
}

// Compact implements host.ContextPlugin.
func (c *ContextClient) Compact(ctx context.Context, session string, req sdk.CompactRequest) (sdk.CompactResult, error) {
	res, err := c.remote.Compact(c.bind(ctx), session, req)
	return res, c.wrap("Compact", err)
}

// Apply implements host.ContextPlugin.
func (c *ContextClient) Apply(ctx context.Context, session, op string, args json.RawMessage) (json.RawMessage, error) {
	out, err := c.remote.Apply(c.bind(ctx), session, op, args)
	return out, c.wrap("Apply "+op, err)
}

// ApplyWithState implements host.StateCarrier.
func (c *ContextClient) ApplyWithState(ctx context.Context, session, op string, args json.RawMessage) (json.RawMessage, []byte, error) {
	out, st, err := c.remote.ApplyWithState(c.bind(ctx), session, op, args)
	return out, st, c.wrap("Apply "+op, err)
}

// CompactWithState implements host.StateCarrier.
func (c *ContextClient) CompactWithState(ctx context.Context, session string, req sdk.CompactRequest) (sdk.CompactResult, []byte, error) {
	res, st, err := c.remote.CompactWithState(c.bind(ctx), session, req)
	return res, st, c.wrap("Compact", err)
}

// PreparedWithState implements host.StateCarrier.
func (c *ContextClient) PreparedWithState(ctx context.Context, session string, budget sdk.Budget) ([]byte, error) {
	st, err := c.remote.PreparedWithState(c.bind(ctx), session, budget)
	return st, c.wrap("Prepared", err)
}

// Prepared implements host.ContextPlugin.
func (c *ContextClient) Prepared(ctx context.Context, session string, budget sdk.Budget) error {
	return c.wrap("Prepared", c.remote.Prepared(c.bind(ctx), session, budget))
}

// State implements host.ContextPlugin.
func (c *ContextClient) State(ctx context.Context, session string) ([]byte, error) {
	st, err := c.remote.State(c.bind(ctx), session)
	return st, c.wrap("State", err)
}

// Restore implements host.ContextPlugin.
func (c *ContextClient) Restore(ctx context.Context, session string, state []byte) error {
	return c.wrap("Restore", c.remote.Restore(c.bind(ctx), session, state))
}

// EndSession implements host.ContextPlugin.
func (c *ContextClient) EndSession(ctx context.Context, session string) error {
	return c.wrap("EndSession", c.remote.EndSession(c.bind(ctx), session))
}

// AssemblerClient is an assembler process behind host.Assembler.
type AssemblerClient struct {
	*Process
	remote *sdk.RemoteAssembler
	info   sdk.AssemblerInfo
}

// Info returns the description the assembler gave at launch.
func (a *AssemblerClient) Info() sdk.AssemblerInfo { return a.info }

// Assemble implements host.Assembler.
func (a *AssemblerClient) Assemble(ctx context.Context, req sdk.AssembleRequest) (sdk.AssembleResult, error) {
	res, err := a.remote.Assemble(ctx, req)
	return res, a.wrap("Assemble", err)
}

// Pid is the process id of the plugin (0 if unknown).
func (p *Process) Pid() int {
	if rc := p.pc.ReattachConfig(); rc != nil {
		return rc.Pid
	}
	return 0
}
