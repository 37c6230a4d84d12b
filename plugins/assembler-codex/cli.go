package main

import "github.com/ctxhost/ctxhost/sdk/assembly"

// buildPrompt is seed 000's Codex prompt, everything inline; every section
// is left out when its body is empty.
//
//	[SYSTEM]
//	{system body}
//
//	[TEAM_TASK]
//	{team task}
//
//	[CONTEXT]
//	{supporting context}
//
//	{one entry per history message}
//
//	[MESSAGE]
//	{input}
func buildPrompt(p assembly.Parts) string {
	var s assembly.Sections
	s.Add(assembly.Bracket("SYSTEM"), p.System)
	s.Add(assembly.Bracket("TEAM_TASK"), p.TeamTask)
	s.Add(assembly.Bracket("CONTEXT"), assembly.SystemBody(assembly.ContextBody(p.Context), assembly.RenderConversation(p.History)))
	s.Add(assembly.Bracket("MESSAGE"), p.Input)
	return s.String()
}
