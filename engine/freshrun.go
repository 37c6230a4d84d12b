package engine

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/ctxhost/ctxhost/host"
	"github.com/ctxhost/ctxhost/host/fresh"
	"github.com/ctxhost/ctxhost/sdk"
	"github.com/ctxhost/ctxhost/transcript"
)

// freshRun is a session of a fresh profile (context mode = "fresh"):
// every prepare builds a task context from scratch, without conversation
// history. The input gives the next task's spec; ops since the last
// prepare become the task's ops, applied to its own plugin session;
// messages and usage are accepted and left out. What it holds for the
// next task (FreshTask) is saved with the host session, as the session's
// attachment, before each call returns: a session opened again from the
// store builds the same next task.
type freshRun struct {
	engine *Engine
	host   *host.Session

	mu      sync.Mutex
	manager *fresh.Manager
	// prompt is the system part the manager was built with.
	prompt string
	state  FreshTask
	// ignored records the event types already reported as left out.
	ignored map[string]bool
}

// newFreshRun is the fresh run of session s: the one s holds, or a new
// one with the system prompt and instructions the session was created
// with (the profile's, unless the creator gave others).
func newFreshRun(e *Engine, s *host.Session) (*freshRun, error) {
	st, err := freshTaskOf(s)
	if err != nil {
		return nil, err
	}
	return &freshRun{engine: e, host: s, ignored: map[string]bool{}, state: st}, nil
}

// reload takes the fresh state the host session now holds (after
// RestoreState).
func (f *freshRun) reload() error {
	st, err := freshTaskOf(f.host)
	if err != nil {
		return err
	}
	f.mu.Lock()
	f.state = st
	f.mu.Unlock()
	return nil
}

// task is the next task as it stands.
func (f *freshRun) task() FreshTask {
	f.mu.Lock()
	defer f.mu.Unlock()
	t := f.state
	t.Ops = slices.Clone(t.Ops)
	return t
}

// FreshTurn is one task context built by a fresh profile.
type FreshTurn struct {
	Task       *fresh.TaskContext
	Validation fresh.Validation
}

// Explain is the task context's breakdown in words: its budget, its
// warnings and the suggestions they call for.
func (ft *FreshTurn) Explain() string { return fresh.Explain(ft.Validation) }

// Payload is the payload of a fresh turn ("" media type without one).
func (ft *FreshTurn) Payload() ([]byte, string) {
	if ft.Task.Payload == nil {
		return nil, ""
	}
	return ft.Task.Payload.Payload, ft.Task.Payload.MediaType
}

// SetSystemPrompt sets the fixed system part of the next task contexts.
func (f *freshRun) SetSystemPrompt(text string) error {
	return f.change(func(st *FreshTask) { st.System = text })
}

// SetInstructions sets the instructions of the next task contexts.
func (f *freshRun) SetInstructions(text string) error {
	return f.change(func(st *FreshTask) { st.Instructions = text })
}

func (f *freshRun) setSpec(text string) error {
	return f.change(func(st *FreshTask) { st.Spec = text })
}

// change applies edit to the state and saves it; on a failed save the
// state is left as it was.
func (f *freshRun) change(edit func(*FreshTask)) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	_, err := f.changeLocked(edit)
	return err
}

// changeLocked is change with f.mu held; it returns the state before.
func (f *freshRun) changeLocked(edit func(*FreshTask)) (FreshTask, error) {
	before := f.state
	next := before
	next.Ops = slices.Clone(before.Ops)
	edit(&next)
	b, err := json.Marshal(next)
	if err != nil {
		return before, fmt.Errorf("encode fresh task state: %w", err)
	}
	if err := f.host.Durability().SaveAttachment(b); err != nil {
		return before, err
	}
	f.state = next
	return before, nil
}

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
	return f.change(func(st *FreshTask) {
		st.Ops = append(st.Ops, FreshOp{Plugin: plugin, Op: op, Args: args})
	})
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
	prompt := JoinSystem(f.state.System, f.state.Instructions)
	if f.manager == nil || prompt != f.prompt {
		if err := f.closeLocked(ctx); err != nil {
			f.engine.Logger.Warn("end fresh task contexts", "error", err)
		}
		m, err := f.engine.NewFreshManager(prompt, f.host.ID())
		if err != nil {
			return nil, err
		}
		f.manager, f.prompt = m, prompt
	}
	if agent == "" {
		agent = f.engine.Context.Name
	}
	// The task is consumed (and counted) in the store before it is built.
	st, err := f.changeLocked(func(st *FreshTask) { st.Tasks, st.Spec, st.Ops = st.Tasks+1, "", nil })
	if err != nil {
		return nil, err
	}
	task, copts := taskOf(st.Spec)
	task.ID, task.AgentID = "task-"+strconv.Itoa(st.Tasks+1), agent
	ops := make([]fresh.Op, 0, len(st.Ops))
	for _, op := range st.Ops {
		ops = append(ops, fresh.Op{Plugin: op.Plugin, Op: op.Op, Args: op.Args})
	}
	tc, err := f.manager.BuildFreshContext(ctx, task, fresh.BuildOptions{MaxTokens: f.engine.FreshBudget(), Ops: ops, Context: copts})
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

// taskInput is a task spec given as a JSON object in a fresh session's
// input: the task's fields and its context options.
type taskInput struct {
	Name               string               `json:"name"`
	Title              string               `json:"title"`
	Description        string               `json:"description"`
	Files              []string             `json:"files"`
	Dependencies       []string             `json:"dependencies"`
	TestCriteria       string               `json:"testCriteria"`
	AcceptanceCriteria []string             `json:"acceptanceCriteria"`
	CodeSearchQuery    string               `json:"codeSearchQuery"`
	Options            fresh.ContextOptions `json:"options"`
}

// taskOf reads the next task from the input: a JSON object with a name or
// title, or a description (and only taskInput's fields) is a task spec;
// any other text is the task's description as it is.
func taskOf(spec string) (fresh.TaskSpec, fresh.ContextOptions) {
	plain := fresh.TaskSpec{Spec: spec}
	trimmed := strings.TrimSpace(spec)
	if !strings.HasPrefix(trimmed, "{") {
		return plain, fresh.ContextOptions{}
	}
	dec := json.NewDecoder(strings.NewReader(trimmed))
	dec.DisallowUnknownFields()
	var in taskInput
	if err := dec.Decode(&in); err != nil || dec.More() {
		return plain, fresh.ContextOptions{}
	}
	title := in.Title
	if title == "" {
		title = in.Name
	}
	if title == "" && in.Description == "" {
		return plain, fresh.ContextOptions{}
	}
	return fresh.TaskSpec{Title: title, Spec: in.Description, Files: in.Files, Dependencies: in.Dependencies,
		TestCriteria: in.TestCriteria, AcceptanceCriteria: in.AcceptanceCriteria, CodeSearchQuery: in.CodeSearchQuery}, in.Options
}

// The rest of the fresh profile's mode: what a session's calls mean when
// every turn is a task context built from scratch.

var _ mode = (*freshRun)(nil)

// checkState refuses an exported state whose fresh task state cannot be
// read, before anything changes.
func (f *freshRun) checkState(data []byte) error {
	var st struct{ Attachment json.RawMessage }
	if err := json.Unmarshal(data, &st); err != nil {
		return err
	}
	if len(st.Attachment) > 0 {
		if err := json.Unmarshal(st.Attachment, &FreshTask{}); err != nil {
			return fmt.Errorf("fresh task state: %w", err)
		}
	}
	return nil
}

// SetInput sets the next task's spec.
func (f *freshRun) SetInput(text string) error { return f.setSpec(text) }

// SetTools refuses tools: a fresh task context carries none.
func (f *freshRun) SetTools(sdk.RequestTools) error {
	return fmt.Errorf("set tools: a fresh profile's task contexts carry no tool definitions")
}

// addMessage accepts m and leaves it out: a fresh context has no history.
func (f *freshRun) addMessage(m sdk.Message) (sdk.Message, error) {
	f.ignore(transcript.EventMessage)
	return m, nil
}

// addMessages accepts msgs and leaves them out.
func (f *freshRun) addMessages(msgs []sdk.Message) ([]sdk.Message, error) {
	for range msgs {
		f.ignore(transcript.EventMessage)
	}
	return msgs, nil
}

// setTeamTask refuses a team task: a fresh profile has no team
// conversation.
func (f *freshRun) setTeamTask(string) error {
	return fmt.Errorf("team_task does not apply to context %q: a fresh profile builds task contexts, not a team conversation", f.engine.Context.Name)
}

// Apply queues the op for the next task context.
func (f *freshRun) Apply(_ context.Context, plugin, op string, args json.RawMessage) (json.RawMessage, error) {
	return nil, f.addOp(plugin, op, args)
}

// ReportUsage ignores usage: a fresh context is not calibrated.
func (f *freshRun) ReportUsage(int, int) error {
	f.ignore(transcript.EventUsage)
	return nil
}

// prepare builds the next task's context.
func (f *freshRun) prepare(ctx context.Context, agent string) (Turn, error) {
	ft, err := f.build(ctx, agent)
	if err != nil {
		return Turn{}, err
	}
	return Turn{Agent: ft.Task.Task.AgentID, Fresh: ft}, nil
}
