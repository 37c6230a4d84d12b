package history

import (
	"fmt"
	"regexp"
	"strings"

	"github.com/ctxhost/ctxhost/sdk"
)

// Conversation shapes InferAuto decides between (Shape).
const (
	// ShapeChat: people and a model talking, no tool calls: inferred as
	// InferChat.
	ShapeChat = "chat"
	// ShapeTools: the model calls tools. Observations are the tool
	// results and every user message is a person's: inferred as
	// InferChat.
	ShapeTools = "tools"
	// ShapeAgent: an agent loop whose observations come back as user
	// messages, each answering an action the assistant message before it
	// ends with: inferred as InferAgent.
	ShapeAgent = "agent"
)

// shapeEvidence is what InferAuto has seen of a conversation: counted as
// messages are added, never recounted.
type shapeEvidence struct {
	tools int // messages that make a tool call or carry a tool's result
	// Replies are the user messages that follow an assistant message
	// (outside the opening): output ones follow an assistant message
	// ending in an action block and read as an environment's output;
	// person ones are the others.
	outputReplies, personReplies int
	lastAction                   int // how the last message added ends when it is an assistant's (endsInAction), else noAction
}

// shapeState is InferAuto's decision and why it was taken.
type shapeState struct {
	shape, why string
	seen       shapeEvidence
}

// Shape returns the conversation's shape as the history reads it and why
// (InferAuto; under another rule, the rule's own shape and reason).
func (h *History) Shape() (shape, why string) {
	h.mu.RLock()
	defer h.mu.RUnlock()
	switch h.opts.Infer {
	case InferAuto:
		return h.shape.shape, h.shape.why
	case InferAgent:
		return ShapeAgent, "infer agent: the profile says the conversation is an agent loop"
	case InferChat:
		return ShapeChat, "infer chat: the profile says the conversation is a chat"
	}
	return "", "infer off: unlabelled messages take their role's kind"
}

// inferMode is the rule unlabelled messages are inferred by now: the
// configured one, or under InferAuto the one the shape calls for.
func (h *History) inferMode() string {
	if h.opts.Infer != InferAuto {
		return h.opts.Infer
	}
	if h.shape.shape == ShapeAgent {
		return InferAgent
	}
	return InferChat
}

// observeShape counts what m (about to be added) says of the
// conversation's shape and returns the shape then decided. Tool use is
// decisive and final: once the model calls tools, observations are tool
// results and user messages people. Without it, the conversation is an
// agent loop when at least two user messages, and two thirds of those
// that follow an assistant message, answer an action (the assistant
// message ends in a command in tags; or in a fenced block or an Action
// line, and the user message reads as an environment's output); it stops being one only when those fall below a
// third, so that a turn or two of either kind never flips the decision.
func (h *History) observeShape(m *sdk.Message) {
	s := &h.shape
	ev := &s.seen
	switch {
	case m.Role == sdk.RoleTool || len(m.ToolCalls) > 0:
		ev.tools++
	case m.Role == sdk.RoleUser && !h.opening && len(h.entries) > 0 && h.entries[len(h.entries)-1].assistant:
		if ev.lastAction == commandAction || ev.lastAction == blockAction && readsAsOutput(m) {
			ev.outputReplies++
		} else {
			ev.personReplies++
		}
	}
	ev.lastAction = noAction
	if m.Role == sdk.RoleAssistant && len(m.ToolCalls) == 0 {
		ev.lastAction = endsInAction(m.Text())
	}
	shape, why := ShapeChat, "no tool calls and no action answered by an environment's output: a chat"
	replies := ev.outputReplies + ev.personReplies
	switch {
	case ev.tools > 0:
		shape, why = ShapeTools, fmt.Sprintf("%d messages make tool calls or carry their results: observations are tool results, user messages are people", ev.tools)
	case s.shape == ShapeAgent && 3*ev.outputReplies >= replies,
		s.shape != ShapeAgent && ev.outputReplies >= 2 && 3*ev.outputReplies >= 2*replies:
		shape, why = ShapeAgent, fmt.Sprintf("%d of the %d user messages after an assistant message answer the action it ends with as an environment's output: an agent loop whose observations are user messages", ev.outputReplies, replies)
	case replies > 0:
		why = fmt.Sprintf("%d of the %d user messages after an assistant message read as an environment's output: a chat", ev.outputReplies, replies)
	}
	s.why = why
	if shape != s.shape {
		s.shape = shape
		h.reinfer()
	}
}

// reinfer gives every unlabelled message the kind the current rule gives
// it, as if the history had been built under that rule, and resets the
// view when a kind changed: what compaction may do depends on the kinds,
// so the view is computed again from the messages (the next compaction
// does it) rather than kept half under each rule. The caller holds h.mu.
func (h *History) reinfer() {
	if len(h.entries) == 0 {
		return
	}
	h.saveView() // before any kind changes
	old := make([]kind, len(h.entries))
	for i := range h.entries {
		old[i] = h.entries[i].kind
	}
	h.hasTask, h.opening, h.openingTask, h.request = false, true, -1, -1
	for i := range h.entries {
		m := h.message(i)
		k := h.kindAt(i, &m)
		h.entries[i].kind = kindOf(k)
		h.noteAdded(i, &m, k)
	}
	for i := range h.entries {
		if h.entries[i].kind != old[i] {
			h.resetView()
			h.viewChanged()
			return
		}
	}
}

// commandEnd matches the end of an assistant message that acts through a
// command in tags (SWE-agent's <command>, OpenHands' <execute_bash>, a
// function call written out): no chat answer ends so, and the user
// message answering it is the environment's output.
var commandEnd = regexp.MustCompile(`</(command|execute_bash|execute_ipython|bash|python|action|function|tool_call|invoke|function_calls)>\s*$`)

// blockEnd matches a weaker sign of an action: a fenced block or a ReAct
// "Action:" line ending the message. A chat answer may end in code too,
// so the reply must also read as output (readsAsOutput).
var blockEnd = regexp.MustCompile("(?s)(\n```[^\n]*\n.*\n```|(?m:^(Action|ACTION|Action Input):[^\n]*))\\s*$")

// Action strengths (endsInAction).
const (
	noAction = iota
	blockAction
	commandAction
)

// endsInAction says how an assistant text ends: in a command in tags, in
// a fenced block or Action line, or in neither.
func endsInAction(text string) int {
	t := strings.TrimSpace(text)
	if len(t) > 4096 { // the block is at the end: look at the end only
		t = t[len(t)-4096:]
	}
	switch {
	case t == "":
		return noAction
	case commandEnd.MatchString(t):
		return commandAction
	case blockEnd.MatchString("\n" + t):
		return blockAction
	}
	return noAction
}

// outputStart matches how an environment's output to an action is often
// introduced.
var outputStart = regexp.MustCompile(`(?i)^(observation|output|execution result|exit code|return code|returncode|stdout|stderr|traceback \(most recent call last\)|\[file:|tool output|command output|result of)\b`)

// promptLine matches a shell or REPL prompt ending an environment's
// output ("bash-$", "user@host:~/repo$", "root@box:/#", ">>>", "In [3]:").
var promptLine = regexp.MustCompile(`^(\S{0,60}[$#]|>>>|In \[\d+\]:)$`)

// readsAsOutput reports whether a user message reads as an environment's
// output rather than a person's words: it is empty, opens as output does,
// or ends with a shell prompt.
func readsAsOutput(m *sdk.Message) bool {
	t := strings.TrimSpace(m.Text())
	if t == "" {
		return true
	}
	if outputStart.MatchString(t) {
		return true
	}
	last := t[strings.LastIndexByte(t, '\n')+1:]
	return promptLine.MatchString(strings.TrimSpace(last))
}
