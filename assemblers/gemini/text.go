package gemini

import (
	"github.com/ctxhost/ctxhost/sdk"
	"github.com/ctxhost/ctxhost/sdk/assembly"
)

// buildText is the Gemini prompt: plain headers, no bracketed
// markers, every section left out when its body is empty.
//
//	Instructions:
//	{system body}
//
//	Team task:
//	{team task}
//
//	Context:
//	{supporting context}
//
//	Conversation so far:
//	{one entry per message}
//
//	User message:
//	{input}
func (c *caches) buildText(req sdk.AssembleRequest, p assembly.Parts) string {
	var s assembly.Sections
	s.Add("Instructions:", p.System)
	s.Add("Team task:", p.TeamTask)
	s.Add("Context:", assembly.ContextBody(p.Context))
	s.Add("Conversation so far:", c.conversations.Render(req, p.History))
	s.Add("User message:", p.Input)
	return s.String()
}
