// Package report holds what the host reports about a session's turns:
// the prepared context of a turn (Prepared) with its per-component usage,
// compaction log, pressure action, prompt-cache cost and agent view, and a
// session's counters (Metrics). They are plain data, shared by the host
// that makes them and by the engine and commands that read them, which
// need not import the host for them.
package report

import (
	"fmt"
	"strings"
	"time"

	"github.com/ctxhost/ctxhost/sdk"
)

// ComponentUsage is one line of the token usage log: what one component
// cost in the turn.
type ComponentUsage struct {
	Name        string
	Slot        sdk.Slot
	Priority    int
	Compactable bool
	Tokens      int // raw, as counted by the host
}

// Prepared is the context of one turn.
type Prepared struct {
	// Payload, MediaType, System and HasSystem come from the assembler;
	// they are empty when the session has no assembler. Payload is
	// read-only: a repeated turn returns the same slice again. With
	// host.Config.ReusePayload it is valid until the next Prepare of the same
	// agent.
	Payload   []byte
	MediaType string
	System    string
	HasSystem bool
	// PayloadID numbers the payload among those the session assembled (a
	// turn that sends the last payload again has its number). Its first
	// Repeats bytes are, unchanged, those of the payload numbered Extends,
	// the agent's last one (Extends 0: none known): a caller that holds
	// that payload needs only what follows them.
	PayloadID, Extends uint64
	Repeats            int
	// Components are the final components in assembly order. They and
	// their messages are read-only: the history's may be shared with the
	// session's view of it.
	Components []sdk.Component
	// Usage is the per-component token usage log.
	Usage []ComponentUsage
	// Before is the budget before compaction; Budget the final one. Each
	// holds raw (Used) and calibrated (CalibratedUsed) figures.
	Before sdk.Budget
	Budget sdk.Budget
	// Compaction is nil when nothing was compacted.
	Compaction *CompactionReport
	// Action is the pressure action of this turn (from the utilization
	// before compaction), whatever the strategy.
	Action PressureAction
	// Restart is set with ActionRestart: what host.Session.Restart would carry over.
	Restart *RestartPlan
	// Cache is this turn's cost with prompt caching, beside the unmanaged
	// history's; nil when no price model applies (no assembler format
	// declares one and host.Config.Pricing is unset).
	Cache *CacheReport
	// View is the agent's view this turn was assembled from, for a named
	// agent of a multi-agent session (host.Config.Viewer); nil otherwise.
	View *ViewReport
	// LeftOut are the optional plugins whose component this turn could not
	// have (each with its error); Warnings says the same in words.
	LeftOut []PluginFailure
	// Warnings: plugins left out, a target not met, failed hooks.
	Warnings []string
	// Summary says what the summarize step did this turn; nil when the
	// session has no summarizer or it did nothing.
	Summary *SummaryReport
}

// SummaryReport is what the summarize step did in one turn: a summary
// taken (arrived from the background request, or waited for), spliced
// into the view, requested ahead of need.
type SummaryReport struct {
	// Taken: a summary arrived and the history took it this turn;
	// Spliced: the view shows a new summary this turn (when it was taken,
	// or when the window passed the span of one taken before).
	Taken, Spliced bool
	// Count, Covers, Model, InputTokens, OutputTokens and Cost describe
	// the summary the view shows (or the one taken, when not shown yet):
	// how many messages it stands for and their ids, the model that made
	// it, the tokens and cost units of the call.
	Count                     int
	Covers                    string
	Model                     string
	InputTokens, OutputTokens int
	Cost                      float64
	// Requested names the span whose summary this turn asked for in the
	// background ("" when none: below the warning line, one in flight,
	// backing off after a failure, or nothing to summarize).
	Requested string
	// OutputRequested names the tool output whose summary this turn
	// asked for in the background (summarize's tool_output_tokens);
	// OutputTaken the one whose summary the history took this turn (it
	// is shown in the output's place once the output is masked).
	OutputRequested, OutputTaken string
	// Waited is how long a turn that had to compact waited for the
	// summary (wait = "critical").
	Waited time.Duration
}

// PluginFailure is a plugin left out of a turn and why.
type PluginFailure struct {
	Plugin string
	Err    error
}

// CompactionStep records one component's part in a compaction.
type CompactionStep struct {
	Component string
	Action    string        // "compact", or "mask" for the graduated strategy's history masking
	Asked     int           // tokens asked for (the remaining deficit)
	Claimed   int           // tokens the component said it freed (never trusted)
	Freed     int           // tokens freed as measured by the host
	Duration  time.Duration // wall time of the call and the recount
	Log       string        // the component's own account
	Discarded string        // why the answer was discarded (the previous component is kept)
	// Retried is the first attempt's cut-off when the answer came on a
	// retry ("" otherwise).
	Retried string
}

// CompactionReport is the log of one compaction.
type CompactionReport struct {
	Reason string
	// Decision is the strategy's account of why it compacted (or masked).
	Decision string
	Target   int // calibrated tokens to get down to
	Before   int // raw tokens used before
	After    int // raw tokens used after
	Deficit  int // raw tokens that had to be freed
	Freed    int // raw tokens freed, measured
	Met      bool
	Steps    []CompactionStep
}

// String renders the report as one line per step, for warnings and logs.
func (r *CompactionReport) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "needed %d tokens, freed %d (%d -> %d)", r.Deficit, r.Freed, r.Before, r.After)
	for _, st := range r.Steps {
		fmt.Fprintf(&b, "; %s: %s asked %d, claimed %d, freed %d", st.Component, st.Action, st.Asked, st.Claimed, st.Freed)
		if st.Discarded != "" {
			fmt.Fprintf(&b, " (discarded: %s)", st.Discarded)
		}
	}
	return b.String()
}

// CacheReport is what one prepared context costs with prompt caching, and
// what the unmanaged history (every message, nothing compacted, no window)
// would have cost at the same turn.
type CacheReport struct {
	Pricing sdk.Pricing
	// Managed is this payload: its prefix shared with the previous payload
	// of the same session and agent, split into cache read / write /
	// uncached tokens, and its cost units.
	Managed sdk.CacheCost
	// PrefixKept: this payload starts with the whole previous one except
	// its final message (context and input), so the provider's cache hits.
	PrefixKept bool
	// Unmanaged is the same turn with the whole history appended as is.
	Unmanaged sdk.CacheCost
	// UnmanagedFits: the unmanaged history would fit the available budget.
	UnmanagedFits bool
	// Summaries is the cost units of the summaries taken this turn (the
	// summarizer's calls, priced as the summary block says); it counts
	// against the managed payload's savings.
	Summaries float64
}

// PressureAction is the graduated answer to context pressure, returned
// with every prepare whatever the strategy, so an agent loop can act on it.
type PressureAction string

// The pressure actions, by utilization zone.
const (
	ActionContinue PressureAction = "continue"  // below the warning threshold
	ActionMask     PressureAction = "mask"      // warning <= utilization < critical
	ActionWindDown PressureAction = "wind_down" // first time at or above critical
	ActionRestart  PressureAction = "restart"   // at or above critical again
)

// RestartPlan is what a graduated restart carries into the fresh context:
// the last turns and a system notification that says what happened.
type RestartPlan struct {
	CarryOver    []sdk.Message
	Notification string
}

// AgentView is what one agent of a multi-agent session sees in place of
// the session's own system prompt, instructions, history and input: a
// host.Viewer derives it from the session's messages each turn. The plugin
// components are the same for every agent.
type AgentView struct {
	// SystemPrompt and Instructions are the agent's system instruction
	// and instruction-file text (empty parts are left out).
	SystemPrompt, Instructions string
	// TeamTask is the session's team task as the agent sees it.
	TeamTask string
	// History is the agent's context window, oldest first: the history
	// component of its payload.
	History []sdk.Message
	// Input is the current message (the input component); Current is the
	// message it comes from, nil when the conversation is empty.
	Input   string
	Current *sdk.Message
	// MaxBytes bounds the payload plus the system text handed over
	// separately; when it is over, the oldest History messages are
	// dropped (the fewest that make it fit). 0: no bound.
	MaxBytes int
	// Warnings are added to the turn's warnings (a fallback assembler).
	Warnings []string
}

// ViewReport describes the view a multi-agent turn was assembled from
// (Prepared.View).
type ViewReport struct {
	AgentView
	// Dropped is the number of oldest History messages left out to meet
	// MaxBytes; Bytes is the payload size plus the separate system text.
	Dropped int
	Bytes   int
}

// Metrics are a session's counters.
type Metrics struct {
	Prepares    int
	Compactions int
	// FreedByComponent is the measured tokens freed per component, summed
	// over every compaction.
	FreedByComponent map[string]int
	// LastPrepare is the per-component tokens of the last prepared context.
	LastPrepare []sdk.ComponentTokens
	// SummaryRequests counts the summarizer's calls, SummaryFailures the
	// answers discarded (an error, a timeout, an empty, oversized or
	// non-text answer), SummariesTaken the summaries the history took;
	// SummaryInputTokens, SummaryOutputTokens and SummaryCost sum what
	// the calls cost.
	SummaryRequests, SummaryFailures, SummariesTaken int
	SummaryInputTokens, SummaryOutputTokens          int
	SummaryCost                                      float64
}
