package engine

import (
	"context"
	"fmt"
	"maps"
	"slices"

	"github.com/ctxhost/ctxhost/host"
	"github.com/ctxhost/ctxhost/sdk"
)

// Route is the assembler, format and options one agent's payloads use.
type Route struct {
	Assembler host.Assembler
	Format    string
	Options   map[string]string
}

// Router is a host.Assembler that sends each Assemble call to the route of
// the agent it is for (AgentIdentity.Name), or to the default route. It lets
// one session assemble for several agents, each with its own assembler.
type Router struct {
	def    Route
	agents map[string]Route
}

var _ host.InlineAssembler = (*Router)(nil)

// NewRouter returns a Router whose default route is def.
func NewRouter(def Route) *Router { return &Router{def: def, agents: map[string]Route{}} }

// SetAgent routes the payloads of agent name to r.
func (r *Router) SetAgent(name string, route Route) { r.agents[name] = route }

// Route returns the route of agent name (the default for an unknown name).
func (r *Router) Route(agent string) Route {
	if route, ok := r.agents[agent]; ok {
		return route
	}
	return r.def
}

// Info describes the default assembler.
func (r *Router) Info() sdk.AssemblerInfo { return r.def.Assembler.Info() }

// ReleaseSession releases session on every route's assembler that keeps
// state per session (sdk.SessionReleaser), each once.
func (r *Router) ReleaseSession(session string) {
	done := map[host.Assembler]bool{}
	for _, route := range append([]Route{r.def}, slices.Collect(maps.Values(r.agents))...) {
		if rel, ok := route.Assembler.(sdk.SessionReleaser); ok && !done[route.Assembler] {
			done[route.Assembler] = true
			rel.ReleaseSession(session)
		}
	}
}

// Inline reports whether agent's route assembles inline
// (host.InlineAssembler).
func (r *Router) Inline(agent string) bool {
	in, ok := r.Route(agent).Assembler.(host.InlineAssembler)
	return ok && in.Inline(agent)
}

// Assemble assembles with the route of req.Agent.Name; the route's format
// and options replace the request's.
func (r *Router) Assemble(ctx context.Context, req sdk.AssembleRequest) (sdk.AssembleResult, error) {
	route := r.Route(req.Agent.Name)
	req.Format, req.Options = route.Format, route.Options
	res, err := route.Assembler.Assemble(ctx, req)
	if err != nil {
		return res, fmt.Errorf("assemble with %q for agent %q: %w", route.Assembler.Info().Name, req.Agent.Name, err)
	}
	return res, nil
}
