// Package transcript loads agent transcripts for `ctxhost run`: ctxhost's
// own JSONL of events, SWE-agent .traj files and OpenAI-style message
// lists. Load parses and checks a whole transcript before it returns;
// Open reads one event at a time in constant memory (Check reads a
// transcript through first, so a malformed line stops a run before
// anything is applied); errors read "file:line: what is wrong".
//
// ctxhost JSONL has one event per line (blank lines and lines starting with
// # or // are skipped; unknown types or fields are errors):
//
//	{"type":"system","text":"..."}
//	{"type":"instructions","text":"..."}
//	{"type":"message","role":"user|assistant|system|tool","content":"...",
//	  "id"?,"name"?,"speaker_type"?:"human|ai","tool_calls"?:[{"id","name","arguments"}],
//	  "tool_call_id"?,"tool_name"?,"metadata"?:{...}}
//	{"type":"input","text":"..."}
//	{"type":"apply","plugin":"plan","op":"set_plan","args":{...}}
//	{"type":"tool_output","tool":"bash","output":"...","exit_code"?:0,"call_id"?:"..."}
//	{"type":"usage","prompt_tokens":N,"completion_tokens":N}
//	{"type":"prepare","agent"?:"name"}
//	{"type":"team_task","text":"..."}
//
// In every format a tool message must answer a call declared by an earlier
// assistant message; its tool name is filled in from that call.
package transcript

import (
	"encoding/json"
	"fmt"

	"github.com/ctxhost/ctxhost/sdk"
)

// Event types.
const (
	EventSystem       = "system"       // Text is the system prompt
	EventInstructions = "instructions" // Text is the instructions
	EventMessage      = "message"      // Message is a conversation turn
	EventInput        = "input"        // Text is the current input
	EventApply        = "apply"        // Plugin, Op, Args: an op on a plugin
	EventToolOutput   = "tool_output"  // ToolOutput: sugar for tooloutput add_output
	EventUsage        = "usage"        // Usage: tokens the provider reported
	EventPrepare      = "prepare"      // a turn boundary; Agent optionally names the agent
	EventTeamTask     = "team_task"    // Text is the team task
)

// ToolOutput is the payload of a tool_output event.
type ToolOutput struct {
	Tool     string `json:"tool"`
	Output   string `json:"output"`
	ExitCode *int   `json:"exit_code,omitempty"`
	CallID   string `json:"call_id,omitempty"`
}

// Usage is the payload of a usage event.
type Usage struct {
	PromptTokens     int `json:"prompt_tokens"`
	CompletionTokens int `json:"completion_tokens"`
}

// Event is one step of a transcript. Which fields are set depends on Type.
type Event struct {
	// Line is the 1-based line the event comes from (for .traj and JSON
	// message lists, the line where the message object starts).
	Line int
	Type string

	Message    *sdk.Message    // message
	Text       string          // system, instructions, input, team_task
	Plugin     string          // apply
	Op         string          // apply
	Args       json.RawMessage // apply: a JSON object ({} when omitted)
	ToolOutput *ToolOutput     // tool_output
	Usage      *Usage          // usage
	Agent      string          // prepare (optional)
}

// Transcript is a loaded transcript.
type Transcript struct {
	Format string // one of the Formats names
	Events []Event
}

// Count returns the number of events of type typ.
func (t *Transcript) Count(typ string) int {
	n := 0
	for _, e := range t.Events {
		if e.Type == typ {
			n++
		}
	}
	return n
}

// lineError is an error located at a line of a file.
func lineError(file string, line int, format string, a ...any) error {
	return &locatedError{fmt.Errorf("%s:%d: %s", file, line, fmt.Sprintf(format, a...))}
}

// locatedError is an error that names its file and line.
type locatedError struct{ err error }

func (e *locatedError) Error() string { return e.err.Error() }
func (e *locatedError) Unwrap() error { return e.err }

// Messages returns the conversation of t as messages, in event order: a
// system event as a system message and a shallow copy of every message
// event's message. Other events (instructions, inputs, ops, tool outputs, usage,
// turn boundaries) are left out.
func (t *Transcript) Messages() []sdk.Message {
	var msgs []sdk.Message
	for _, e := range t.Events {
		switch e.Type {
		case EventSystem:
			msgs = append(msgs, sdk.Message{Role: sdk.RoleSystem, Content: e.Text})
		case EventMessage:
			msgs = append(msgs, *e.Message)
		}
	}
	return msgs
}
