// Package assembly holds the helpers assembler authors share: the system
// body (SystemBody), the split of an AssembleRequest into its parts by
// slot, and the rendering of messages and context for the text formats.
//
// # Slots
//
// An assembler receives the final components in order, each with a slot.
// Split sorts them into Parts:
//
//   - system: the texts of every system-slot component, in order, become the
//     system body (SystemBody: each trimmed, empty ones dropped, joined by a
//     blank line). In multi-agent mode the host supplies the agent's system
//     instruction and its instruction-file text as two such components.
//   - context: the component named sdk.ComponentTeamTask is the team task;
//     every other context component (plan, memory, tool outputs, custom
//     plugins) is supporting context, kept in order. Components whose
//     content is empty after trimming are dropped. A component with an
//     unknown or empty slot counts as context (the PluginInfo default).
//   - history: the messages of every history component, in order. A
//     history component that carries text instead of messages contributes
//     one system-role message with that text.
//   - input: the texts of the input components, trimmed and joined by a
//     blank line, are the current input.
//
// # Where each part goes
//
//	part          gemini api              gemini text            claude api               claude cli              codex api                 codex cli     plaintext
//	system        systemInstruction       "Instructions:"        system                   System (flag)           role system message       [SYSTEM]      first paragraph
//	team task     final user turn, part 1 "Team task:"           final user turn, block 1 [TEAM_TASK]             final user message        [TEAM_TASK]   context paragraph
//	context       final user turn, part 1 "Context:"             final user turn, block 1 [CONTEXT], first        final user message        [CONTEXT]     context paragraph
//	history       contents user/model     "Conversation so far:" messages user/assistant  [CONTEXT], after context messages                  [CONTEXT]     context paragraph
//	input         final user turn, last   "User message:"        final user turn, last    [MESSAGE]               final user message, last  [MESSAGE]     last paragraph
//
// The API formats put the team task and supporting context (ContextBlock)
// in the final user turn, just before the input, not at the front: that
// content changes from turn to turn, and keeping it at the tail leaves the
// system text and the history an append-only prefix that providers can
// cache (a stable prefix is what a prompt cache pays for). In the final user turn the context block and
// the input are two parts (Gemini parts, Anthropic text blocks, OpenAI
// content parts), context first; each alone is a single part or string.
//
// # Formats
//
// An empty request format picks the assembler's first (default) format;
// an unknown one is an error wrapping sdk.ErrInvalidArgs that names it
// (PickFormat). An assembler declares its formats as a Formats table (name,
// media type, description, Build func); Formats.Assemble picks, splits and
// builds, so its Assemble method is one line. Payloads are deterministic:
// JSON is encoded from structs (fixed field order, no HTML escaping, no
// trailing newline, see Marshal), text is built in request order.
//
// # Text rendering
//
// The text formats render history as one entry per message (RenderMessage),
// entries separated by a newline:
//
//	user:                 "{speaker}: {content}"       (speaker = Name, else the role)
//	assistant:            "{speaker}: {content}", then one line per tool call:
//	                      "{speaker} called {tool}({arguments}) (id {id})"
//	tool:                 "{tool} result (id {id}): {content}"
//	system:               "{content}" as is, e.g. "[12 earlier messages omitted for brevity]"
//
// The "(id ...)" suffix is left out when the call id is empty; a tool
// result without a tool name takes the name of the call it answers, else
// "tool". No brackets are added, so the Gemini text format stays free of
// bracketed markers.
//
// Sections are never emitted empty (a header alone tells the model
// nothing): Sections skips a header
// whose body is empty after trimming. Routing markers are stripped by the
// host before assembly; assemblers never strip them again. Byte-budget
// trimming is not an assembler's job either.
package assembly
