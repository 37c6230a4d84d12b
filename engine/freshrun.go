package engine

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"sync"

	"github.com/ctxhost/ctxhost/host/fresh"
	"github.com/ctxhost/ctxhost/transcript"
)

// freshRun is a session of a fresh profile (context mode = "fresh"):
// every prepare builds a task context from scratch, without conversation
// history. The input gives the next task's spec; ops since the last
// prepare become the task's ops, applied to its own plugin session;
// messages and usage are accepted and left out.
type freshRun struct {
	engine *Engine

	mu      sync.Mutex
	manager *fresh.Manager
	// prompt is the system part the manager was built with; system and
	// instructions are what was set since.
	prompt, system, instructions string

	spec  string     // the next task's spec (the last input)
	ops   []fresh.Op // the next task's ops
	tasks int
	// ignored records the event types already reported as left out.
	ignored map[string]bool
}

func newFreshRun(a *Engine) *freshRun {
	return &freshRun{engine: a, system: a.Context.SystemPrompt, instructions: a.Context.Instructions, ignored: map[string]bool{}}
}

// FreshTurn is one task context built by a fresh profile.
type FreshTurn struct {
	Task       *fresh.TaskContext
	Validation fresh.Validation
}

// Payload is the payload of a fresh turn ("" media type without one).
func (ft *FreshTurn) Payload() ([]byte, string) {
	if ft.Task.Payload == nil {
		return nil, ""
	}
	return ft.Task.Payload.Payload, ft.Task.Payload.MediaType
}

func (f *freshRun) setSystem(text string)       { f.mu.Lock(); f.system = text; f.mu.Unlock() }
func (f *freshRun) setInstructions(text string) { f.mu.Lock(); f.instructions = text; f.mu.Unlock() }
func (f *freshRun) setSpec(text string)         { f.mu.Lock(); f.spec = text; f.mu.Unlock() }

// ignore warns once per event type that a fresh context leaves it out.
func (f *freshRun) ignore(typ string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.ignored[typ] {
		return
	}
	f.ignored[typ] = true
	why := map[string]string{
		transcript.EventMessage: "message events are accepted but not included: a fresh context has no conversation history",
		transcript.EventUsage:   "usage events are accepted but not used: a fresh context is not calibrated",
	}[typ]
	f.engine.Logger.Warn(fmt.Sprintf("context %q is fresh: %s", f.engine.Context.Name, why))
}

// addOp queues an op for the next task. An op for a plugin the profile
// does not use is an error.
func (f *freshRun) addOp(plugin, op string, args json.RawMessage) error {
	if !f.uses(plugin) {
		return fmt.Errorf("plugin %q is not bound in context %q", plugin, f.engine.Context.Name)
	}
	f.mu.Lock()
	f.ops = append(f.ops, fresh.Op{Plugin: plugin, Op: op, Args: args})
	f.mu.Unlock()
	return nil
}

func (f *freshRun) uses(plugin string) bool {
	for _, p := range f.engine.Plugins {
		if p.Config.Name == plugin {
			return true
		}
	}
	return false
}

// build builds the next task's fresh context for agent (the profile's name
// when empty): task "task-N", the last input as its spec, the queued ops.
// The spec and ops are consumed.
func (f *freshRun) build(ctx context.Context, agent string) (*FreshTurn, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	prompt := JoinSystem(f.system, f.instructions)
	if f.manager == nil || prompt != f.prompt {
		if err := f.closeLocked(ctx); err != nil {
			f.engine.Logger.Warn("end fresh task contexts", "error", err)
		}
		m, err := f.engine.NewFreshManager(prompt)
		if err != nil {
			return nil, err
		}
		f.manager, f.prompt = m, prompt
	}
	if agent == "" {
		agent = f.engine.Context.Name
	}
	f.tasks++
	task := fresh.TaskSpec{ID: "task-" + strconv.Itoa(f.tasks), AgentID: agent, Spec: f.spec}
	ops := f.ops
	f.spec, f.ops = "", nil
	tc, err := f.manager.BuildFreshContext(ctx, task, fresh.BuildOptions{MaxTokens: f.engine.FreshBudget(), Ops: ops})
	if err != nil {
		return nil, err
	}
	tc.Warnings = append(tc.Warnings, f.engine.UnavailableWarnings()...)
	return &FreshTurn{Task: tc, Validation: fresh.Validate(tc)}, nil
}

// close ends every task context of the current manager and its plugin
// sessions.
func (f *freshRun) close(ctx context.Context) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.closeLocked(ctx)
}

func (f *freshRun) closeLocked(ctx context.Context) error {
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
