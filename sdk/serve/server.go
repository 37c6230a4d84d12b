package serve

import (
	"context"
	"time"

	"github.com/ctxhost/ctxhost/internal/wire"
	"github.com/ctxhost/ctxhost/internal/wire/pb"
	"github.com/ctxhost/ctxhost/sdk"
	"github.com/hashicorp/go-hclog"
)

// contextServer is the gRPC face of an sdk.LocalPlugin. Every handler follows
// one template: convert the request, call the LocalPlugin, log, convert back.
type contextServer struct {
	pb.UnimplementedContextPluginServer
	local *sdk.LocalPlugin
	log   hclog.Logger
}

func (s *contextServer) done(method, session string, start time.Time, err error) error {
	if err != nil {
		s.log.Debug("call failed", "method", method, "session", session, "error", err)
	} else if s.log.IsTrace() {
		s.log.Trace("call", "method", method, "session", session, "duration", time.Since(start))
	}
	return wire.ToStatus(err)
}

func (s *contextServer) Describe(context.Context, *pb.Empty) (*pb.PluginInfo, error) {
	return wire.ToProtoPluginInfo(s.local.Info()), nil
}

func (s *contextServer) Configure(ctx context.Context, req *pb.ConfigureRequest) (*pb.Empty, error) {
	start := time.Now()
	ctx = sdk.WithBinding(ctx, req.GetBinding())
	err := s.local.Configure(ctx, req.GetConfigJson())
	return &pb.Empty{}, s.done("Configure", "", start, err)
}

func (s *contextServer) Component(ctx context.Context, req *pb.ComponentRequest) (*pb.ComponentResponse, error) {
	start := time.Now()
	ctx = sdk.WithBinding(ctx, req.GetBinding())
	c, err := s.local.Component(ctx, req.GetSessionId(), req.GetEncoding())
	if err != nil {
		return nil, s.done("Component", req.GetSessionId(), start, err)
	}
	return &pb.ComponentResponse{Component: wire.ToProtoComponent(c)}, s.done("Component", req.GetSessionId(), start, nil)
}

func (s *contextServer) Compact(ctx context.Context, req *pb.CompactRequest) (*pb.CompactResponse, error) {
	start := time.Now()
	ctx = sdk.WithBinding(ctx, req.GetBinding())
	res, st, err := s.local.CompactWithState(ctx, req.GetSessionId(), wire.FromProtoCompactRequest(req))
	if err != nil {
		return nil, s.done("Compact", req.GetSessionId(), start, err)
	}
	out := wire.ToProtoCompactResponse(res)
	out.State = wire.ToProtoSessionState(st)
	return out, s.done("Compact", req.GetSessionId(), start, nil)
}

func (s *contextServer) Summarize(ctx context.Context, req *pb.SummarizeRequest) (*pb.SummarizeResponse, error) {
	start := time.Now()
	ctx = sdk.WithBinding(ctx, req.GetBinding())
	res, err := s.local.Summarize(ctx, req.GetSessionId(), wire.FromProtoSummarizeRequest(req))
	if err != nil {
		return nil, s.done("Summarize", req.GetSessionId(), start, err)
	}
	return wire.ToProtoSummarizeResponse(res), s.done("Summarize", req.GetSessionId(), start, nil)
}

func (s *contextServer) Apply(ctx context.Context, req *pb.ApplyRequest) (*pb.ApplyResponse, error) {
	start := time.Now()
	ctx = sdk.WithBinding(ctx, req.GetBinding())
	out, st, err := s.local.ApplyWithState(ctx, req.GetSessionId(), req.GetOp(), req.GetArgsJson())
	if err != nil {
		return nil, s.done("Apply", req.GetSessionId(), start, err)
	}
	return &pb.ApplyResponse{ResultJson: out, State: wire.ToProtoSessionState(st)}, s.done("Apply", req.GetSessionId(), start, nil)
}

func (s *contextServer) Prepared(ctx context.Context, req *pb.PreparedRequest) (*pb.PreparedResponse, error) {
	start := time.Now()
	ctx = sdk.WithBinding(ctx, req.GetBinding())
	st, err := s.local.PreparedWithState(ctx, req.GetSessionId(), wire.FromProtoBudget(req.GetBudget()))
	if err != nil {
		return nil, s.done("Prepared", req.GetSessionId(), start, err)
	}
	return &pb.PreparedResponse{State: wire.ToProtoSessionState(st)}, s.done("Prepared", req.GetSessionId(), start, nil)
}

func (s *contextServer) State(ctx context.Context, req *pb.SessionRequest) (*pb.StateResponse, error) {
	start := time.Now()
	ctx = sdk.WithBinding(ctx, req.GetBinding())
	st, err := s.local.State(ctx, req.GetSessionId())
	if err != nil {
		return nil, s.done("State", req.GetSessionId(), start, err)
	}
	return &pb.StateResponse{State: st}, s.done("State", req.GetSessionId(), start, nil)
}

func (s *contextServer) Restore(ctx context.Context, req *pb.RestoreRequest) (*pb.Empty, error) {
	start := time.Now()
	ctx = sdk.WithBinding(ctx, req.GetBinding())
	err := s.local.Restore(ctx, req.GetSessionId(), req.GetState())
	return &pb.Empty{}, s.done("Restore", req.GetSessionId(), start, err)
}

func (s *contextServer) EndSession(ctx context.Context, req *pb.SessionRequest) (*pb.Empty, error) {
	start := time.Now()
	ctx = sdk.WithBinding(ctx, req.GetBinding())
	err := s.local.EndSession(ctx, req.GetSessionId())
	return &pb.Empty{}, s.done("EndSession", req.GetSessionId(), start, err)
}

// assemblerServer is the gRPC face of an sdk.LocalAssembler; with bases,
// it serves the delta capability.
type assemblerServer struct {
	pb.UnimplementedAssemblerServer
	local *sdk.LocalAssembler
	log   hclog.Logger
	bases *bases // nil: whole requests only
}

func (s *assemblerServer) Describe(context.Context, *pb.Empty) (*pb.AssemblerInfo, error) {
	info := wire.ToProtoAssemblerInfo(s.local.Info())
	if s.bases != nil {
		info.Capabilities = append(info.Capabilities, wire.CapAssembleDelta)
	}
	info.Capabilities = append(info.Capabilities, wire.CapRelease)
	return info, nil
}

// Release drops the streams' bases the host names and what the assembler
// keeps for the session (sdk.LocalAssembler.ReleaseSession).
func (s *assemblerServer) Release(_ context.Context, req *pb.ReleaseRequest) (*pb.Empty, error) {
	if s.bases != nil {
		s.bases.drop(req.GetBaseIds())
	}
	s.local.ReleaseSession(req.GetSessionId())
	s.log.Debug("released", "session", req.GetSessionId(), "streams", len(req.GetBaseIds()))
	return &pb.Empty{}, nil
}

func (s *assemblerServer) Assemble(ctx context.Context, req *pb.AssembleRequest) (*pb.AssembleResponse, error) {
	var full sdk.AssembleRequest
	var t *turn
	var err error
	switch {
	case s.bases != nil:
		full, t, err = s.bases.request(req)
	case req.GetDelta() != nil:
		err = wire.StatusError(wire.ErrorUnknownBase, "this assembler takes whole requests only")
	default:
		full = wire.FromProtoAssembleRequest(req)
	}
	if err != nil {
		s.log.Debug("call failed", "method", "Assemble", "stream", req.GetBaseId(), "error", err)
		return nil, err
	}
	res, err := s.local.AssembleParts(ctx, full)
	if err != nil {
		s.log.Debug("call failed", "method", "Assemble", "format", req.GetFormat(), "error", err)
		return nil, wire.ToStatus(err)
	}
	return t.answer(res), nil
}
