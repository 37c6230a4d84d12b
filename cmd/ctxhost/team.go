package main

import (
	"fmt"
	"io"
	"strings"

	"github.com/ctxhost/ctxhost/engine"
	"github.com/ctxhost/ctxhost/sdk"
)

// printAgentView prints the view of a multi-agent turn: the context the
// agent saw, its current message and the payload its assembler built.
func printAgentView(w io.Writer, t engine.Turn) {
	p := t.Prepared
	if p.View == nil {
		return
	}
	tp := p.View
	v, _ := t.TeamView()
	fmt.Fprintf(w, "  view of %s (assembler %s, %d bytes", v.Agent, t.Assembler, tp.Bytes)
	if tp.Dropped > 0 {
		fmt.Fprintf(w, ", %d oldest context messages dropped", tp.Dropped)
	}
	fmt.Fprintln(w, "):")
	if v.HasTeamTask {
		fmt.Fprintf(w, "    team task: %s\n", firstLine(v.TeamTask))
	}
	fmt.Fprintf(w, "    context (%d):\n", len(v.ContextMessages))
	for _, m := range v.ContextMessages {
		fmt.Fprintf(w, "      %s: %s\n", m.Name, firstLine(m.Content))
	}
	fmt.Fprintf(w, "    current: %s\n", firstLine(v.CurrentMessage))
	if p.HasSystem {
		fmt.Fprintf(w, "    --- system (separate) ---\n%s\n", indent(p.System))
	}
	fmt.Fprintf(w, "    --- payload (%s) ---\n%s\n", p.MediaType, indent(string(p.Payload)))
}

// viewRecord is the multi-agent view of a turn in run --format json.
type viewRecord struct {
	Agent           string        `json:"agent"`
	ContextMessages []viewMessage `json:"context_messages"`
	CurrentMessage  string        `json:"current_message"`
	Current         *viewMessage  `json:"current,omitempty"`
	TeamTask        *string       `json:"team_task,omitempty"`
	Assembler       string        `json:"assembler"`
	Bytes           int           `json:"bytes"`
	Dropped         int           `json:"dropped"`
	MediaType       string        `json:"media_type,omitempty"`
	System          *string       `json:"system,omitempty"`
	Warnings        []string      `json:"warnings,omitempty"`
}

type viewMessage struct {
	ID          string `json:"id"`
	Name        string `json:"name"`
	Role        string `json:"role"`
	SpeakerType string `json:"speaker_type,omitempty"`
	Content     string `json:"content"`
}

func newViewMessage(m sdk.Message) viewMessage {
	return viewMessage{ID: m.ID, Name: m.Name, Role: m.Role, SpeakerType: string(m.SpeakerType), Content: m.Content}
}

func newViewRecord(t engine.Turn) *viewRecord {
	p := t.Prepared
	if p.View == nil {
		return nil
	}
	tp := p.View
	v, _ := t.TeamView()
	rec := &viewRecord{Agent: v.Agent, ContextMessages: []viewMessage{}, CurrentMessage: v.CurrentMessage,
		Assembler: t.Assembler, Bytes: tp.Bytes, Dropped: tp.Dropped, MediaType: p.MediaType, Warnings: tp.Warnings}
	for _, m := range v.ContextMessages {
		rec.ContextMessages = append(rec.ContextMessages, newViewMessage(m))
	}
	if v.Current != nil {
		cur := newViewMessage(*v.Current)
		rec.Current = &cur
	}
	if v.HasTeamTask {
		task := v.TeamTask
		rec.TeamTask = &task
	}
	if p.HasSystem {
		sys := p.System
		rec.System = &sys
	}
	return rec
}

func firstLine(s string) string {
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		return s[:i] + " …"
	}
	return s
}

func indent(s string) string {
	return "    | " + strings.ReplaceAll(s, "\n", "\n    | ")
}
