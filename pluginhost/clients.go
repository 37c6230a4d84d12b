package pluginhost

import (
	"context"
	"encoding/json"
	"fmt"
	"os/exec"
	"time"

	"github.com/ctxhost/ctxhost/host"
	"github.com/ctxhost/ctxhost/internal/supervise"
	"github.com/ctxhost/ctxhost/internal/wire"
	"github.com/ctxhost/ctxhost/internal/wire/pb"
	"github.com/ctxhost/ctxhost/sdk"
	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/go-plugin"
)

// Interface guards: the remote clients and the SDK's in-process runners
// are interchangeable behind the host's interfaces.
var (
	_ host.ContextPlugin = (*ContextClient)(nil)
	_ host.StateCarrier  = (*ContextClient)(nil)
	_ supervise.Aborter  = (*ContextClient)(nil)
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
	log        hclog.Logger  // the plugin's logger (nil: none)
}

// logger is the plugin's logger, or one that drops everything.
func (p *Process) logger() hclog.Logger {
	if p == nil || p.log == nil {
		return hclog.NewNullLogger()
	}
	return p.log
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

// Abort kills the process with SIGKILL at once (supervise.Aborter): nothing it
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

// wrap names the plugin and the call in err, an error of a gRPC call to the
// process: a transport failure or an exited process wraps
// supervise.ErrDead (host.ErrPluginDead); an answer from the plugin becomes a
// *wire.RemoteError, which keeps the plugin's message and unwraps to the
// SDK sentinel it was sent as (errors.Is with sdk.ErrUnknownOp,
// sdk.ErrInvalidArgs, sdk.ErrNotFound) or to the context error that cut
// the call.
func (p *Process) wrap(call string, err error) error {
	if err == nil {
		return nil
	}
	if wire.IsTransportFailure(err) || p.pc.Exited() {
		return fmt.Errorf("plugin %q: %s: %w: %v", p.name, call, supervise.ErrDead, wire.FromStatus(err))
	}
	return fmt.Errorf("plugin %q: %s: %w", p.name, call, wire.FromStatus(err))
}

// ContextClient is the host's client of a context plugin process: it
// implements host.ContextPlugin (and host.StateCarrier, supervise.Aborter) over
// gRPC, converting between the SDK's types and the wire messages, sending
// every call's binding name, and classifying errors (see Process).
type ContextClient struct {
	*Process
	rpc  pb.ContextPluginClient
	info sdk.PluginInfo
}

// Info returns the description the plugin gave at launch.
func (c *ContextClient) Info() sdk.PluginInfo { return c.info }

// binding is the binding name a call carries: the caller's
// (sdk.WithBinding) or else the plugin's configured name, which is its HCL
// label.
func (c *ContextClient) binding(ctx context.Context) string {
	if b := sdk.Binding(ctx); b != "" {
		return b
	}
	return c.name
}

// describe asks the plugin for its description (at launch). The gRPC
// error is returned as it is, for Launch to classify.
func (c *ContextClient) describe(ctx context.Context) (sdk.PluginInfo, error) {
	info, err := c.rpc.Describe(ctx, &pb.Empty{})
	if err != nil {
		return sdk.PluginInfo{}, err
	}
	return wire.FromProtoPluginInfo(info), nil
}

// Configure implements host.ContextPlugin.
func (c *ContextClient) Configure(ctx context.Context, config json.RawMessage) error {
	_, err := c.rpc.Configure(ctx, &pb.ConfigureRequest{ConfigJson: config, Binding: c.binding(ctx)})
	return c.wrap("Configure", err)
}

// Component implements host.ContextPlugin.
func (c *ContextClient) Component(ctx context.Context, session, encoding string) (*sdk.Component, error) {
	res, err := c.rpc.Component(ctx, &pb.ComponentRequest{SessionId: session, Encoding: encoding, Binding: c.binding(ctx)})
	if err != nil {
		return nil, c.wrap("Component", err)
	}
	return wire.FromProtoComponent(res.GetComponent()), nil
}

// Compact implements host.ContextPlugin.
func (c *ContextClient) Compact(ctx context.Context, session string, req sdk.CompactRequest) (sdk.CompactResult, error) {
	res, _, err := c.CompactWithState(ctx, session, req)
	return res, err
}

// Summarize implements host.Summarizer for a plugin declaring
// sdk.CapSummarize.
func (c *ContextClient) Summarize(ctx context.Context, session string, req sdk.SummarizeRequest) (sdk.SummarizeResult, error) {
	msg := wire.ToProtoSummarizeRequest(req)
	msg.SessionId, msg.Binding = session, c.binding(ctx)
	res, err := c.rpc.Summarize(ctx, msg)
	if err != nil {
		return sdk.SummarizeResult{}, c.wrap("Summarize", err)
	}
	return wire.FromProtoSummarizeResponse(res), nil
}

// Apply implements host.ContextPlugin.
func (c *ContextClient) Apply(ctx context.Context, session, op string, args json.RawMessage) (json.RawMessage, error) {
	out, _, err := c.ApplyWithState(ctx, session, op, args)
	return out, err
}

// Prepared implements host.ContextPlugin.
func (c *ContextClient) Prepared(ctx context.Context, session string, budget sdk.Budget) error {
	_, err := c.PreparedWithState(ctx, session, budget)
	return err
}

// ApplyWithState implements host.StateCarrier: the session's state after
// the op when the plugin sends it (nil otherwise).
func (c *ContextClient) ApplyWithState(ctx context.Context, session, op string, args json.RawMessage) (json.RawMessage, []byte, error) {
	res, err := c.rpc.Apply(ctx, &pb.ApplyRequest{SessionId: session, Op: op, ArgsJson: args, Binding: c.binding(ctx)})
	if err != nil {
		return nil, nil, c.wrap("Apply "+op, err)
	}
	return res.GetResultJson(), wire.FromProtoSessionState(res.GetState()), nil
}

// CompactWithState implements host.StateCarrier: the session's state after
// the compaction when the plugin sends it (nil otherwise).
func (c *ContextClient) CompactWithState(ctx context.Context, session string, req sdk.CompactRequest) (sdk.CompactResult, []byte, error) {
	msg := wire.ToProtoCompactRequest(req)
	msg.SessionId, msg.Binding = session, c.binding(ctx)
	res, err := c.rpc.Compact(ctx, msg)
	if err != nil {
		return sdk.CompactResult{}, nil, c.wrap("Compact", err)
	}
	return wire.FromProtoCompactResponse(res), wire.FromProtoSessionState(res.GetState()), nil
}

// PreparedWithState implements host.StateCarrier: the session's state
// after the hook when the plugin sends it (nil otherwise).
func (c *ContextClient) PreparedWithState(ctx context.Context, session string, budget sdk.Budget) ([]byte, error) {
	res, err := c.rpc.Prepared(ctx, &pb.PreparedRequest{SessionId: session, Budget: wire.ToProtoBudget(budget), Binding: c.binding(ctx)})
	if err != nil {
		return nil, c.wrap("Prepared", err)
	}
	return wire.FromProtoSessionState(res.GetState()), nil
}

// State implements host.ContextPlugin.
func (c *ContextClient) State(ctx context.Context, session string) ([]byte, error) {
	res, err := c.rpc.State(ctx, &pb.SessionRequest{SessionId: session, Binding: c.binding(ctx)})
	if err != nil {
		return nil, c.wrap("State", err)
	}
	return res.GetState(), nil
}

// Restore implements host.ContextPlugin.
func (c *ContextClient) Restore(ctx context.Context, session string, state []byte) error {
	_, err := c.rpc.Restore(ctx, &pb.RestoreRequest{SessionId: session, State: state, Binding: c.binding(ctx)})
	return c.wrap("Restore", err)
}

// EndSession implements host.ContextPlugin.
func (c *ContextClient) EndSession(ctx context.Context, session string) error {
	_, err := c.rpc.EndSession(ctx, &pb.SessionRequest{SessionId: session, Binding: c.binding(ctx)})
	return c.wrap("EndSession", err)
}

// AssemblerClient is the host's client of an assembler process: it
// implements host.Assembler over gRPC, converting and classifying errors
// as ContextClient does.
type AssemblerClient struct {
	*Process
	rpc    pb.AssemblerClient
	info   sdk.AssemblerInfo
	deltas *Deltas // nil: the assembler takes whole requests only
	// release: the assembler drops a session's state when told (see
	// ReleaseSession).
	release bool
}

// Info returns the description the assembler gave at launch.
func (a *AssemblerClient) Info() sdk.AssemblerInfo { return a.info }

// describe asks the assembler for its description (at launch); see
// ContextClient.describe.
// An assembler with the delta capability gets deltas (d, or its own
// Deltas when d is nil).
func (a *AssemblerClient) describe(ctx context.Context, d *Deltas) (sdk.AssemblerInfo, error) {
	info, err := a.rpc.Describe(ctx, &pb.Empty{})
	if err != nil {
		return sdk.AssemblerInfo{}, err
	}
	a.release = wire.HasCapability(info, wire.CapRelease)
	if wire.HasCapability(info, wire.CapAssembleDelta) {
		if a.deltas = d; d == nil {
			a.deltas = NewDeltas(0)
		}
	}
	return wire.FromProtoAssemblerInfo(info), nil
}

// Assemble implements host.Assembler. To an assembler with the delta
// capability, a request that names its session goes as what changed
// since the stream's last acknowledged one (see Deltas).
func (a *AssemblerClient) Assemble(ctx context.Context, req sdk.AssembleRequest) (sdk.AssembleResult, error) {
	var res *pb.AssembleResponse
	var err error
	if a.deltas != nil && req.Session != "" {
		res, err = a.deltas.assemble(ctx, req, func(ctx context.Context, msg *pb.AssembleRequest) (*pb.AssembleResponse, error) {
			return a.rpc.Assemble(ctx, msg)
		})
	} else {
		res, err = a.rpc.Assemble(ctx, wire.ToProtoAssembleRequest(req))
	}
	if err != nil {
		return sdk.AssembleResult{}, a.wrap("Assemble", err)
	}
	out := wire.FromProtoAssembleResponse(res)
	if a.deltas != nil && req.Session != "" {
		out.Repeats = int(res.GetPayloadPrefix()) // completed: the payload is whole
	}
	return out, nil
}

// ReleaseSession forgets the requests and payloads kept for session's
// streams on this side (its next request goes whole). The process keeps
// its own streams until they are the least recently used.
//
// An assembler with the release capability is told too, so that it drops
// the streams' bases and its own caches for session (within
// releaseTimeout; a failure only leaves them to its least recently used
// rule, and is logged).
func (a *AssemblerClient) ReleaseSession(session string) {
	var ids []string
	if a.deltas != nil {
		ids = a.deltas.Release(session)
	}
	if !a.release {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), releaseTimeout)
	defer cancel()
	if _, err := a.rpc.Release(ctx, &pb.ReleaseRequest{SessionId: session, BaseIds: ids}); err != nil {
		a.logger().Debug("release failed", "session", session, "error", a.wrap("Release", err))
	}
}

// releaseTimeout bounds the call that tells an assembler a session left.
const releaseTimeout = 5 * time.Second

// Deltas returns the Deltas the client sends deltas with, nil when the
// assembler does not declare the delta capability.
func (a *AssemblerClient) Deltas() *Deltas { return a.deltas }

// Pid is the process id of the plugin (0 if unknown).
func (p *Process) Pid() int {
	if rc := p.pc.ReattachConfig(); rc != nil {
		return rc.Pid
	}
	return 0
}
