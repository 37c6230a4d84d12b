package host

import (
	"errors"
	"fmt"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/ctxhost/ctxhost/host/history"
	"github.com/ctxhost/ctxhost/sdk"
	"github.com/ctxhost/ctxhost/tokenizer"
)

// Conversation is a session's conversation: its core texts (system
// prompt, instructions, current input, team task), the request's tools
// and the history of messages. Its changes are saved through the
// session's Durability and told to the host's subscribers; it shares the
// session's lock. Reach it with Session.Conversation.
type Conversation struct {
	of           sessionLink
	system       countedText
	instructions countedText
	input        countedText
	tools        countedText // the JSON of the request's tools (sdk.ToolsText)
	teamTask     countedText
	hist         *history.History
}

// sessionLink is what a conversation shares with its session: the lock,
// the id, the configuration and the counter, the save (Durability), the
// events told, and the planning a restart starts again.
type sessionLink struct {
	mu      *sync.Mutex
	id      string
	cfg     *Config
	counter tokenizer.Counter
	saver   saver
	emit    func(Event)
	// restarted tells the planning that the conversation started again.
	restarted func()
}

// Conversation is the session's conversation.
func (s *Session) Conversation() *Conversation { return &s.conv }

// Texts are a session's core texts as last set.
type Texts struct {
	SystemPrompt, Instructions, Input string
	// TeamTask is a multi-agent session's team task ("" when none).
	TeamTask string
}

// Texts returns the session's core texts.
func (c *Conversation) Texts() Texts {
	s := &c.of
	s.mu.Lock()
	defer s.mu.Unlock()
	return Texts{SystemPrompt: c.system.text, Instructions: c.instructions.text, Input: c.input.text, TeamTask: c.teamTask.text}
}

// setText sets a core text, counted by count (nil: as plain text),
// journals and saves it.
func (c *Conversation) setText(dst *countedText, what, text string, count func(string) countedText) error {
	s := &c.of
	if !utf8.ValidString(text) {
		return fmt.Errorf("set %s: text is not valid UTF-8", what)
	}
	t := countedText{text: text}
	if count != nil {
		t = count(text)
	} else {
		t.tokens = s.counter.Count(text)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	*dst = t
	s.saver.note(journalOp{Set: strings.Fields(what)[0], Text: t.text}) // system, instructions, input, tools
	if err := s.saver.persist(); err != nil {
		return fmt.Errorf("set %s: %w", what, err)
	}
	return nil
}

// SetSystemPrompt sets the system prompt (priority 0, never compacted).
func (c *Conversation) SetSystemPrompt(text string) error {
	return c.setText(&c.system, "system prompt", text, nil)
}

// SetInstructions sets the instructions (priority 0, never compacted).
func (c *Conversation) SetInstructions(text string) error {
	return c.setText(&c.instructions, "instructions", text, nil)
}

// SetInput sets this turn's input (priority 0, never compacted).
func (c *Conversation) SetInput(text string) error { return c.setText(&c.input, "input", text, nil) }

// SetTools sets the request's tool definitions, tool choice and response
// schema (never compacted; counted as their JSON). A zero r clears them.
// Invalid tools are rejected and nothing changes.
func (c *Conversation) SetTools(r sdk.RequestTools) error {
	s := &c.of
	if err := r.Check(); err != nil {
		return fmt.Errorf("set tools: %w", err)
	}
	if s.cfg.RecallTool {
		r = sdk.WithRecall(r)
	}
	r = sdk.WithTools(r, s.cfg.OwnTools...)
	text, err := sdk.ToolsText(r)
	if err != nil {
		return fmt.Errorf("set tools: %w", err)
	}
	return c.setText(&c.tools, "tools", text, func(text string) countedText {
		return countTools(s.counter, s.cfg.History.Options.Framing, text)
	})
}

// countTools counts the tools component: its JSON, plus the framing's
// per-tool overhead for each definition.
func countTools(counter tokenizer.Counter, f *sdk.Framing, text string) countedText {
	t := countedText{text: text, tokens: counter.Count(text)}
	if f != nil && f.PerTool > 0 && text != "" {
		r, _ := sdk.ParseTools(text) // SetTools and restores check it first
		t.tokens += f.PerTool * len(r.Tools)
	}
	return t
}

// Tools returns the request's tools as last set.
func (c *Conversation) Tools() sdk.RequestTools {
	s := &c.of
	s.mu.Lock()
	text := c.tools.text
	s.mu.Unlock()
	r, _ := sdk.ParseTools(text) // written by SetTools or a checked restore
	return r
}

// AddMessage validates m and appends it to the history; it returns the
// stored message with its id. An invalid message is rejected and nothing
// is stored. With a recorder, a failed save's error comes with the stored
// message: it was added.
func (c *Conversation) AddMessage(m sdk.Message) (sdk.Message, error) {
	s := &c.of
	s.mu.Lock()
	stored, err := c.hist.Add(m)
	var perr error
	if err == nil {
		perr = s.saver.persist()
	}
	s.mu.Unlock()
	if err != nil {
		return sdk.Message{}, fmt.Errorf("add message: %w", err)
	}
	s.emit(Event{Type: EventMessageAdded, Session: s.id, Message: &stored})
	if perr != nil {
		return stored, fmt.Errorf("add message: %w", perr)
	}
	return stored, nil
}

// AddMessages validates msgs and appends them in order, all or none: an
// invalid one (its index named in the error) leaves the history as it
// was. With a recorder they are saved in one write; a failed save's error
// comes with the stored messages: they were added.
func (c *Conversation) AddMessages(msgs []sdk.Message) ([]sdk.Message, error) {
	s := &c.of
	s.mu.Lock()
	stored, err := c.hist.AddAll(msgs)
	var perr error
	if err == nil {
		perr = s.saver.persist()
	}
	s.mu.Unlock()
	if err != nil {
		return nil, fmt.Errorf("add messages: %w", err)
	}
	for i := range stored {
		s.emit(Event{Type: EventMessageAdded, Session: s.id, Message: &stored[i]})
	}
	if perr != nil {
		return stored, fmt.Errorf("add messages: %w", perr)
	}
	return stored, nil
}

// History returns every message, including masked and omitted ones.
func (c *Conversation) History() []sdk.Message {
	c.of.mu.Lock()
	defer c.of.mu.Unlock()
	return c.hist.All()
}

// HistoryFrom returns the stored messages at positions from on (none when
// from is past the last) and how many the history holds: a caller that
// knows the first from needs no copy of them.
func (c *Conversation) HistoryFrom(from int) (msgs []sdk.Message, total int) {
	s := &c.of
	s.mu.Lock()
	defer s.mu.Unlock()
	return c.hist.From(from)
}

// HistoryEntries returns the stored messages at positions [from, to) as
// given, with their resolved kinds and how the context shows each.
func (c *Conversation) HistoryEntries(from, to int) []history.EntryInfo {
	s := &c.of
	s.mu.Lock()
	defer s.mu.Unlock()
	return c.hist.Entries(from, to)
}

// HistoryShape is the conversation's shape as the history reads it, and
// why (see history.History.Shape).
func (c *Conversation) HistoryShape() (shape, why string) {
	s := &c.of
	s.mu.Lock()
	defer s.mu.Unlock()
	return c.hist.Shape()
}

// Message returns one message by id, in full even when masked or omitted.
func (c *Conversation) Message(id string) (sdk.Message, bool) {
	s := &c.of
	s.mu.Lock()
	defer s.mu.Unlock()
	return c.hist.Get(id)
}

// FormatHistory renders the history for display.
func (c *Conversation) FormatHistory(opts history.FormatOptions) string {
	s := &c.of
	s.mu.Lock()
	defer s.mu.Unlock()
	return c.hist.Format(opts)
}

// ClearHistory removes every message. The error is only ever a failure to
// save the state (the recorder's): the history is cleared regardless.
func (c *Conversation) ClearHistory() error {
	s := &c.of
	s.mu.Lock()
	c.hist.Clear()
	err := s.saver.persist()
	s.mu.Unlock()
	s.emit(Event{Type: EventHistoryCleared, Session: s.id})
	if err != nil {
		return fmt.Errorf("clear history: %w", err)
	}
	return nil
}

// Restart performs a graduated restart: the history is replaced
// by a restart notification followed by the last CarryoverTurns user turns,
// and the wind-down flag is cleared. It returns what was carried over.
func (c *Conversation) Restart() (RestartPlan, error) {
	s := &c.of
	s.mu.Lock()
	all := c.hist.All()
	plan := restartPlan(all, *s.cfg)
	c.hist.Clear()
	var err error
	add := func(m sdk.Message) {
		if err != nil {
			return
		}
		m.ID = ""
		_, err = c.hist.Add(m)
	}
	add(sdk.Message{Role: sdk.RoleSystem, Content: plan.Notification})
	for _, m := range plan.CarryOver {
		add(m)
	}
	s.restarted()
	perr := s.saver.persist()
	s.mu.Unlock()
	s.emit(Event{Type: EventHistoryCleared, Session: s.id})
	if err != nil {
		return plan, fmt.Errorf("restart: carry over: %w", errors.Join(err, perr))
	}
	if perr != nil {
		return plan, fmt.Errorf("restart: %w", perr)
	}
	return plan, nil
}

// restartPlan is what a graduated restart of a history holding all
// carries over, under cfg.
func restartPlan(all []sdk.Message, cfg Config) RestartPlan {
	carry := carryOver(all, cfg.Strategy.CarryoverTurns)
	turns := 0
	for _, m := range carry {
		if m.Role == sdk.RoleUser {
			turns++
		}
	}
	return RestartPlan{
		CarryOver:    carry,
		Notification: RestartNotification(cfg.Thresholds.Critical, len(all)-len(carry), turns, len(carry)),
	}
}

// SetTeamTask sets the team task of a multi-agent session: a context
// component (ComponentTeamTask) of every agent's view. A blank text
// clears it. It is saved with the session like the other texts.
func (c *Conversation) SetTeamTask(text string) error {
	if strings.TrimSpace(text) == "" {
		text = ""
	}
	return c.setText(&c.teamTask, "team task", text, nil)
}
