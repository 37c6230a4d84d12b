package sdk

import (
	"context"
	"encoding/json"

	"github.com/ctxhost/ctxhost/internal/wire/pb"
	"google.golang.org/grpc"
)

// RemotePlugin is the host's gRPC client of a context plugin process (used
// by host/pluginhost; plugin authors never need it). Its methods mirror
// host.ContextPlugin, with Describe as an RPC instead of a cached Info.
// Errors from the plugin come back as *RemoteError, which unwraps to the
// SDK sentinel the plugin returned; transport failures are gRPC status
// errors (codes.Unavailable when the process is gone). Every request
// carries the binding name of the call's context (see WithBinding).
type RemotePlugin struct{ c pb.ContextPluginClient }

// NewRemotePlugin returns a client of the context plugin served on conn.
func NewRemotePlugin(conn grpc.ClientConnInterface) *RemotePlugin {
	return &RemotePlugin{c: pb.NewContextPluginClient(conn)}
}

// Describe asks the plugin for its description.
func (r *RemotePlugin) Describe(ctx context.Context) (PluginInfo, error) {
	info, err := r.c.Describe(ctx, &pb.Empty{})
	if err != nil {
		return PluginInfo{}, fromStatus(err)
	}
	return fromProtoPluginInfo(info), nil
}

// Configure sends the plugin its config.
func (r *RemotePlugin) Configure(ctx context.Context, config json.RawMessage) error {
	_, err := r.c.Configure(ctx, &pb.ConfigureRequest{ConfigJson: config, Binding: Binding(ctx)})
	return fromStatus(err)
}

// Component asks for the session's component.
func (r *RemotePlugin) Component(ctx context.Context, session, encoding string) (*Component, error) {
	res, err := r.c.Component(ctx, &pb.ComponentRequest{SessionId: session, Encoding: encoding, Binding: Binding(ctx)})
	if err != nil {
		return nil, fromStatus(err)
	}
	return fromProtoComponent(res.GetComponent()), nil
}

// Compact asks the session to free tokens.
func (r *RemotePlugin) Compact(ctx context.Context, session string, req CompactRequest) (CompactResult, error) {
	res, err := r.c.Compact(ctx, &pb.CompactRequest{SessionId: session, TokensNeeded: int64(req.TokensNeeded), Encoding: req.Encoding, Binding: Binding(ctx)})
	if err != nil {
		return CompactResult{}, fromStatus(err)
	}
	return fromProtoCompactResponse(res), nil
}

// Apply runs op on the session.
func (r *RemotePlugin) Apply(ctx context.Context, session, op string, args json.RawMessage) (json.RawMessage, error) {
	res, err := r.c.Apply(ctx, &pb.ApplyRequest{SessionId: session, Op: op, ArgsJson: args, Binding: Binding(ctx)})
	if err != nil {
		return nil, fromStatus(err)
	}
	return res.GetResultJson(), nil
}

// Prepared notifies the session of a prepared context.
func (r *RemotePlugin) Prepared(ctx context.Context, session string, budget Budget) error {
	_, err := r.PreparedWithState(ctx, session, budget)
	return err
}

// PreparedWithState is Prepared returning the session's state after the
// hook when the plugin sends it (nil otherwise).
func (r *RemotePlugin) PreparedWithState(ctx context.Context, session string, budget Budget) ([]byte, error) {
	res, err := r.c.Prepared(ctx, &pb.PreparedRequest{SessionId: session, Budget: toProtoBudget(budget), Binding: Binding(ctx)})
	if err != nil {
		return nil, fromStatus(err)
	}
	return fromProtoSessionState(res.GetState()), nil
}

// ApplyWithState is Apply returning the session's state after the op when
// the plugin sends it (nil otherwise).
func (r *RemotePlugin) ApplyWithState(ctx context.Context, session, op string, args json.RawMessage) (json.RawMessage, []byte, error) {
	res, err := r.c.Apply(ctx, &pb.ApplyRequest{SessionId: session, Op: op, ArgsJson: args, Binding: Binding(ctx)})
	if err != nil {
		return nil, nil, fromStatus(err)
	}
	return res.GetResultJson(), fromProtoSessionState(res.GetState()), nil
}

// CompactWithState is Compact returning the session's state after it when
// the plugin sends it (nil otherwise).
func (r *RemotePlugin) CompactWithState(ctx context.Context, session string, req CompactRequest) (CompactResult, []byte, error) {
	res, err := r.c.Compact(ctx, &pb.CompactRequest{SessionId: session, TokensNeeded: int64(req.TokensNeeded), Encoding: req.Encoding, Binding: Binding(ctx)})
	if err != nil {
		return CompactResult{}, nil, fromStatus(err)
	}
	return fromProtoCompactResponse(res), fromProtoSessionState(res.GetState()), nil
}

// State exports the session's state.
func (r *RemotePlugin) State(ctx context.Context, session string) ([]byte, error) {
	res, err := r.c.State(ctx, &pb.SessionRequest{SessionId: session, Binding: Binding(ctx)})
	if err != nil {
		return nil, fromStatus(err)
	}
	return res.GetState(), nil
}

// Restore replaces the session's state.
func (r *RemotePlugin) Restore(ctx context.Context, session string, state []byte) error {
	_, err := r.c.Restore(ctx, &pb.RestoreRequest{SessionId: session, State: state, Binding: Binding(ctx)})
	return fromStatus(err)
}

// EndSession drops the session.
func (r *RemotePlugin) EndSession(ctx context.Context, session string) error {
	_, err := r.c.EndSession(ctx, &pb.SessionRequest{SessionId: session, Binding: Binding(ctx)})
	return fromStatus(err)
}

// RemoteAssembler is the host's gRPC client of an assembler process; see
// RemotePlugin.
type RemoteAssembler struct{ c pb.AssemblerClient }

// NewRemoteAssembler returns a client of the assembler served on conn.
func NewRemoteAssembler(conn grpc.ClientConnInterface) *RemoteAssembler {
	return &RemoteAssembler{c: pb.NewAssemblerClient(conn)}
}

// Describe asks the assembler for its description.
func (r *RemoteAssembler) Describe(ctx context.Context) (AssemblerInfo, error) {
	info, err := r.c.Describe(ctx, &pb.Empty{})
	if err != nil {
		return AssemblerInfo{}, fromStatus(err)
	}
	return fromProtoAssemblerInfo(info), nil
}

// Assemble builds a payload.
func (r *RemoteAssembler) Assemble(ctx context.Context, req AssembleRequest) (AssembleResult, error) {
	res, err := r.c.Assemble(ctx, toProtoAssembleRequest(req))
	if err != nil {
		return AssembleResult{}, fromStatus(err)
	}
	return fromProtoAssembleResponse(res), nil
}
