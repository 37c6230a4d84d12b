package assembly

import (
	"strings"

	"github.com/ctxhost/ctxhost/sdk"
)

// Parts is an AssembleRequest sorted by slot (see the package doc).
type Parts struct {
	System   string          // system body (SystemBody over the system slot)
	TeamTask string          // the team_task component's text, trimmed
	Context  []sdk.Component // supporting context components, in order, none empty
	History  []sdk.Message   // conversation messages, in order (read-only: may be the request's own)
	Input    string          // the current input, trimmed
	// Tools is the text of the tools component (sdk.ToolsText): the
	// request's tool definitions, tool choice and response schema; empty
	// when it carries none. See Parts.RequestTools.
	Tools string
}

// RequestTools reads the request's tools (zero when there are none).
func (p Parts) RequestTools() (sdk.RequestTools, error) {
	r, err := sdk.ParseTools(p.Tools)
	if err != nil {
		return r, sdk.InvalidArgs("component %s: %v", sdk.ComponentTools, err)
	}
	return r, nil
}

// Split sorts the request's components into Parts by slot.
func Split(req sdk.AssembleRequest) Parts {
	var p Parts
	var system, task, input []string
	for _, c := range req.Components {
		switch c.Slot {
		case sdk.SlotSystem:
			system = append(system, componentText(c))
		case sdk.SlotHistory:
			if c.IsMessages() && p.History == nil && len(c.Messages) > 0 {
				p.History = c.Messages[:len(c.Messages):len(c.Messages)] // the request's, not a copy
			} else if c.IsMessages() {
				p.History = append(p.History, c.Messages...)
			} else if strings.TrimSpace(c.Text) != "" {
				p.History = append(p.History, sdk.Message{Role: sdk.RoleSystem, Content: c.Text})
			}
		case sdk.SlotInput:
			input = append(input, componentText(c))
		case sdk.SlotTools:
			p.Tools = c.Text
		default:
			if c.Name == sdk.ComponentTeamTask {
				task = append(task, componentText(c))
			} else if ContextText(c) != "" {
				p.Context = append(p.Context, c)
			}
		}
	}
	p.System = SystemBody(system...)
	p.TeamTask = SystemBody(task...)
	p.Input = SystemBody(input...)
	return p
}

// componentText is a component's text, or its messages' contents joined by
// a blank line when it carries messages.
func componentText(c sdk.Component) string {
	if !c.IsMessages() {
		return c.Text
	}
	contents := make([]string, len(c.Messages))
	for i, m := range c.Messages {
		contents[i] = m.Content
	}
	return SystemBody(contents...)
}

// ContextText is the text of a supporting-context component, trimmed: its
// text, or its messages rendered as conversation lines.
func ContextText(c sdk.Component) string {
	if c.IsMessages() {
		return strings.TrimSpace(RenderConversation(c.Messages))
	}
	return strings.TrimSpace(c.Text)
}

// ContextBody joins the supporting context components' texts in order,
// separated by a blank line.
func ContextBody(cs []sdk.Component) string {
	texts := make([]string, len(cs))
	for i, c := range cs {
		texts[i] = ContextText(c)
	}
	return SystemBody(texts...)
}

// ContextBlock is the team task and supporting context as one text for the
// API formats' final user turn: a "Team task:" section, then the context
// texts. It is empty when both are.
func (p Parts) ContextBlock() string {
	var s Sections
	s.Add("Team task:", p.TeamTask)
	s.Add("", ContextBody(p.Context))
	return s.String()
}
