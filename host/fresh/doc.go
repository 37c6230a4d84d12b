// Package fresh builds fresh task contexts: each task's context
// is built from scratch, without conversation history, and fitted to a
// token budget by a TokenBudgeter.
//
// # The budget
//
// A total budget (default 150000 tokens) is split into fixed allocations
// (system prompt 2000, task spec 1000, reserved for the response 16000;
// from the HCL `fresh` block) and a dynamic remainder shared by the plugin
// components. The dynamic part is shared by water-filling: each component
// with content is offered its share (shares are relative weights,
// normalised over the components still wanting tokens); a component whose
// whole content fits in its offer takes only what it needs and leaves the
// rest to the others, and the offer is recomputed until no component is
// satisfied; the rest are cut to their offers. Components without a share
// get only what the shared ones leave unused (equal weights among
// themselves). After cutting, tokens left unused (a cut keeps whole items,
// so it usually lands under its allocation) are offered again to the cut
// components, heaviest share first, until nothing changes.
//
// # Cutting by whole items
//
// A component is never cut mid-item. Message components keep their newest
// whole messages. Text components keep their leading items: blocks
// separated by a blank line when the text has at least two, else lines.
// The system prompt and the task spec are cut the same way to their fixed
// allocations (with a warning).
//
// # Plugins and degradation
//
// Plugin components come from host.ContextPlugin values; every task gets
// its own plugin session ("fresh/AGENT/TASK", or "fresh/SCOPE/AGENT/TASK"
// for a manager with Options.Scope, as each conversation of a service
// has), ended when the task or its agent is cleared. An optional plugin
// that fails yields an empty component and a warning; a required one
// fails the build with an error naming it.
//
// Validate explains a TaskContext: a per-component breakdown, warnings and
// suggestions; Explain renders it as text (what `ctxhost inspect` shows).
package fresh
