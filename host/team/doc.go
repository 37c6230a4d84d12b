// Package team is the multi-agent view:
// one conversation shared by several agents (humans and AIs, each message
// naming its speaker), a team task, and, for each agent, the view that
// agent gets before it speaks.
//
// # The view of one agent
//
// The current message is the latest message. The context is the window of
// messages before it: the agent's window_size (default 5; 0 allowed; a
// per-agent value or a per-call override wins over the team's). Then, in
// this order and only here (never in assemblers):
//
//  1. routing markers (by default [NEXT:name]) are stripped once
//     from every context message and from the current message, with the
//     blanks that followed them, and the text is trimmed; context messages
//     left empty are dropped;
//  2. AI→AI deduplication, when enabled: only when the
//     current message's speaker is an AI, the last context message is
//     removed if it has the current message's id, or else the same speaker
//     and the same (stripped) content. Human messages are never
//     deduplicated.
//
// Roles are rewritten relative to the agent: its own earlier messages are
// assistant turns, everyone else's are user turns that keep the speaker's
// name, so the API formats tell the speakers apart.
//
// # Preparing a payload
//
// A Viewer derives each agent's view from a host session's own messages
// (host.Viewer): a multi-agent session keeps one history, and an agent's
// turn is one Session.Prepare that assembles the view (system slot: the
// agent's system instruction and its instruction-file text; context slot:
// the team task and the plugin components; history slot: the context
// messages; input slot: the current message) with the session's assembler,
// which routes by agent. Team, below, is the same view over a message list
// of its own, for callers without a session.
//
// The byte budget (MaxBytes, default 768 KiB, below the argument limits
// of the command-line agents a view is often handed to) is enforced
// by the session, not by assemblers: the size is the payload plus the
// system text handed over separately. When it is over, the oldest context
// messages are dropped: a binary search over the number dropped finds the
// fewest that fit (size never grows when a message is dropped), so only a
// turn over the budget costs more than one assembly. When even no context
// at all does not fit, Prepare fails with host.ErrPayloadTooLarge.
//
// # Events
//
// OnEvent (optional) is called synchronously, outside the team's lock,
// for every message added and team task change (EventTeamTaskTruncated
// too when the 5 KiB cap cut it).
package team
