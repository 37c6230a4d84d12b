package plan

import (
	"context"
	"encoding/json"

	"github.com/ctxhost/ctxhost/sdk"
)

const (
	pluginName     = "plan"
	pluginVersion  = "0.1.0"
	pluginPriority = 1
)

// planPlugin is the plan plugin: stateless itself, one planSession per
// session.
type planPlugin struct{}

var _ sdk.Plugin = planPlugin{}

// Describe declares the plan plugin: priority 1, never compacted, with
// exportable state.
func (planPlugin) Describe() sdk.PluginInfo {
	return sdk.PluginInfo{
		Name:            pluginName,
		Version:         pluginVersion,
		Description:     "The agent's plan: a goal and tasks with dependencies, rendered as a checklist with progress and the current task.",
		Priority:        pluginPriority,
		Compactable:     false,
		Slot:            sdk.SlotContext,
		ProtocolVersion: sdk.ProtocolVersion,
		Capabilities:    []string{sdk.CapState},
		Ops: []sdk.OpInfo{
			{Name: opSetPlan, Description: "Replace the plan: {goal, tasks: [{id, title, depends_on?: [id]}]}; every task starts pending."},
			{Name: opUpdateTask, Description: "Set a task's status: {id, status: pending|in_progress|done|failed|skipped, note?}."},
			{Name: opGetPlan, Description: "Return the plan with statuses, progress and the current task ({plan: null} when there is none)."},
			{Name: opClear, Description: "Remove the plan."},
		},
	}
}

// NewSession returns an empty plan session.
func (planPlugin) NewSession(string) sdk.Session { return &planSession{} }

// planSession is one session's plan; nil when no plan is set.
type planSession struct {
	plan *plan
}

var (
	_ sdk.Session = (*planSession)(nil)
	_ sdk.Stater  = (*planSession)(nil)
)

// Component returns the checklist, or nil when there is no plan.
func (s *planSession) Component(context.Context, string) (*sdk.Component, error) {
	if s.plan == nil {
		return nil, nil
	}
	return &sdk.Component{
		Slot: sdk.SlotContext,
		Text: render(s.plan),
	}, nil
}

// Apply runs one op; see Describe for the list.
func (s *planSession) Apply(_ context.Context, op string, args json.RawMessage) (json.RawMessage, error) {
	switch op {
	case opSetPlan:
		return s.setPlan(args)
	case opUpdateTask:
		return s.updateTask(args)
	case opGetPlan:
		return s.getPlan(args)
	case opClear:
		return s.clear(args)
	}
	return nil, sdk.UnknownOp(op)
}
