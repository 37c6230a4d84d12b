package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strconv"

	"github.com/ctxhost/ctxhost/host/fresh"
	"github.com/ctxhost/ctxhost/internal/app"
	"github.com/ctxhost/ctxhost/transcript"
)

// freshRun is the state of a replay on a fresh profile (context mode =
// "fresh", seed 003): every prepare builds a task context from scratch with
// host/fresh, without conversation history. input events give the next
// task's spec; apply and tool_output events since the last prepare become
// the task's ops, applied to its own plugin session; message events are
// accepted and left out.
type freshRun struct {
	app     *app.App
	manager *fresh.Manager
	// prompt is the system part the manager was built with; system and
	// instructions are what the transcript set since.
	prompt, system, instructions string

	spec  string     // the next task's spec (the last input event)
	ops   []fresh.Op // the next task's ops
	tasks int
	// ignored records the event types already reported as left out.
	ignored map[string]bool
}

func newFreshRun(a *app.App) *freshRun {
	return &freshRun{app: a, system: a.Context.SystemPrompt, instructions: a.Context.Instructions, ignored: map[string]bool{}}
}

// freshTurn is one task context built by a fresh replay.
type freshTurn struct {
	Task       *fresh.TaskContext
	Validation fresh.Validation
}

// apply handles one event of a fresh replay (prepare excepted).
func (f *freshRun) apply(ev transcript.Event, toolOutputs string) error {
	switch ev.Type {
	case transcript.EventSystem:
		f.system = ev.Text
	case transcript.EventInstructions:
		f.instructions = ev.Text
	case transcript.EventInput:
		f.spec = ev.Text
	case transcript.EventApply:
		return f.addOp(ev.Plugin, ev.Op, ev.Args)
	case transcript.EventToolOutput:
		if toolOutputs == "" {
			return fmt.Errorf("no %q plugin is bound in context %q (add the tooloutput plugin)", toolOutputsPlugin, f.app.Context.Name)
		}
		args, err := json.Marshal(ev.ToolOutput)
		if err != nil {
			return fmt.Errorf("encode tool output: %w", err)
		}
		return f.addOp(toolOutputs, "add_output", args)
	case transcript.EventMessage, transcript.EventUsage:
		f.ignore(ev.Type)
	case transcript.EventTeamTask:
		return fmt.Errorf("team_task does not apply to context %q: a fresh profile builds task contexts, not a team conversation", f.app.Context.Name)
	default:
		return fmt.Errorf("unknown event type %q", ev.Type)
	}
	return nil
}

// ignore warns once per event type that a fresh context leaves it out.
func (f *freshRun) ignore(typ string) {
	if f.ignored[typ] {
		return
	}
	f.ignored[typ] = true
	why := map[string]string{
		transcript.EventMessage: "message events are accepted but not included: a fresh context has no conversation history",
		transcript.EventUsage:   "usage events are accepted but not used: a fresh context is not calibrated",
	}[typ]
	f.app.Logger.Warn(fmt.Sprintf("context %q is fresh: %s", f.app.Context.Name, why))
}

// addOp queues an op for the next task. An op for a plugin the profile
// does not use is an error; one for an unavailable optional plugin is
// dropped with a warning.
func (f *freshRun) addOp(plugin, op string, args json.RawMessage) error {
	if u := f.app.UnavailablePluginNamed(plugin); u != nil {
		f.app.Logger.Warn("op dropped: "+u.Warning(), "op", op)
		return nil
	}
	if !f.uses(plugin) {
		return fmt.Errorf("plugin %q is not bound in context %q", plugin, f.app.Context.Name)
	}
	f.ops = append(f.ops, fresh.Op{Plugin: plugin, Op: op, Args: args})
	return nil
}

func (f *freshRun) uses(plugin string) bool {
	for _, p := range f.app.Plugins {
		if p.Config.Name == plugin {
			return true
		}
	}
	return false
}

// build builds the next task's fresh context for agent (the profile's name
// when empty): task "task-N", the last input as its spec, the queued ops.
// The spec and ops are consumed.
func (f *freshRun) build(ctx context.Context, agent string) (*freshTurn, error) {
	prompt := app.JoinSystem(f.system, f.instructions)
	if f.manager == nil || prompt != f.prompt {
		if err := f.close(ctx); err != nil {
			f.app.Logger.Warn("end fresh task contexts", "error", err)
		}
		m, err := f.app.NewFreshManager(prompt)
		if err != nil {
			return nil, err
		}
		f.manager, f.prompt = m, prompt
	}
	if agent == "" {
		agent = f.app.Context.Name
	}
	f.tasks++
	task := fresh.TaskSpec{ID: "task-" + strconv.Itoa(f.tasks), AgentID: agent, Spec: f.spec}
	ops := f.ops
	f.spec, f.ops = "", nil
	tc, err := f.manager.BuildFreshContext(ctx, task, fresh.BuildOptions{MaxTokens: f.app.FreshBudget(), Ops: ops})
	if err != nil {
		return nil, err
	}
	tc.Warnings = append(tc.Warnings, f.app.UnavailableWarnings()...)
	return &freshTurn{Task: tc, Validation: fresh.Validate(tc)}, nil
}

// close ends every task context of the current manager and its plugin
// sessions.
func (f *freshRun) close(ctx context.Context) error {
	if f.manager == nil {
		return nil
	}
	var err error
	for _, tc := range f.manager.ActiveContexts() {
		if e := f.manager.ClearTaskContext(ctx, tc.Task.ID); e != nil && err == nil {
			err = e
		}
	}
	return err
}

// printFreshTurn prints a fresh task context: the task, the breakdown with
// its warnings and suggestions (fresh.Explain), then the payload.
func printFreshTurn(w io.Writer, t turn) {
	ft := t.Fresh
	tc := ft.Task
	fmt.Fprintf(w, "turn %d (line %d)  task %s  agent %s  context %s: %s / %s tok\n", t.Number, t.Line, tc.Task.ID,
		tc.Task.AgentID, tc.ContextID, thousands(ft.Validation.TokenCount), thousands(ft.Validation.MaxTokens))
	fmt.Fprint(w, indentBy("  ", fresh.Explain(ft.Validation)))
	if p := tc.Payload; p != nil {
		if p.HasSystem {
			fmt.Fprintf(w, "    --- system (separate) ---\n%s\n", indent(p.System))
		}
		fmt.Fprintf(w, "    --- payload (%s, %d bytes) ---\n%s\n", p.MediaType, len(p.Payload), indent(string(p.Payload)))
	}
}

// freshRecord is a fresh task context in run --format json.
type freshRecord struct {
	TaskID      string            `json:"task_id"`
	Agent       string            `json:"agent"`
	ContextID   string            `json:"context_id"`
	Session     string            `json:"session"`
	Spec        string            `json:"spec"`
	MediaType   string            `json:"media_type,omitempty"`
	Valid       bool              `json:"valid"`
	TokenCount  int               `json:"token_count"`
	MaxTokens   int               `json:"max_tokens"`
	Reserved    int               `json:"reserved"`
	Breakdown   []breakdownRecord `json:"breakdown"`
	Warnings    []string          `json:"warnings,omitempty"`
	Suggestions []string          `json:"suggestions,omitempty"`
}

// breakdownRecord is one line of a fresh breakdown (fresh.BreakdownEntry).
type breakdownRecord struct {
	Name      string `json:"name"`
	Kind      string `json:"kind"`
	Tokens    int    `json:"tokens"`
	Allocated int    `json:"allocated"`
	Wanted    int    `json:"wanted"`
	Items     int    `json:"items,omitempty"`
	Kept      int    `json:"kept,omitempty"`
}

func newFreshRecord(ft *freshTurn) *freshRecord {
	tc, v := ft.Task, ft.Validation
	rec := &freshRecord{TaskID: tc.Task.ID, Agent: tc.Task.AgentID, ContextID: tc.ContextID, Session: tc.Session,
		Spec: tc.Task.Spec, Valid: v.Valid, TokenCount: v.TokenCount, MaxTokens: v.MaxTokens, Reserved: tc.Reserved,
		Breakdown: []breakdownRecord{}, Warnings: v.Warnings, Suggestions: v.Suggestions}
	for _, e := range v.Breakdown {
		rec.Breakdown = append(rec.Breakdown, breakdownRecord{Name: e.Name, Kind: e.Kind, Tokens: e.Tokens,
			Allocated: e.Allocated, Wanted: e.Demand, Items: e.Items, Kept: e.Kept})
	}
	return rec
}

// payload is the payload of a fresh turn ("" media type without one).
func (ft *freshTurn) payload() ([]byte, string) {
	if ft.Task.Payload == nil {
		return nil, ""
	}
	return ft.Task.Payload.Payload, ft.Task.Payload.MediaType
}
