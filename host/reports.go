package host

import "github.com/ctxhost/ctxhost/report"

// What a session reports about its turns is package report's, so that the
// engine's callers read it without importing the host; these are the
// same types under the host's names.
type (
	// Prepared is the context of one turn.
	Prepared = report.Prepared
	// ComponentUsage is one line of the token usage log.
	ComponentUsage = report.ComponentUsage
	// PluginFailure is a plugin left out of a turn and why.
	PluginFailure = report.PluginFailure
	// CompactionReport is the log of one compaction.
	CompactionReport = report.CompactionReport
	// CompactionStep records one component's part in a compaction.
	CompactionStep = report.CompactionStep
	// CacheReport is what one prepared context costs with prompt caching.
	CacheReport = report.CacheReport
	// PressureAction is the graduated answer to context pressure.
	PressureAction = report.PressureAction
	// RestartPlan is what a graduated restart carries into the fresh
	// context.
	RestartPlan = report.RestartPlan
	// AgentView is what one agent of a multi-agent session sees.
	AgentView = report.AgentView
	// SummaryReport is what the summarize step did in one turn.
	SummaryReport = report.SummaryReport
	// ViewReport describes the view a multi-agent turn was assembled from.
	ViewReport = report.ViewReport
	// Metrics are a session's counters.
	Metrics = report.Metrics
)

// The pressure actions, by utilization zone.
const (
	ActionContinue = report.ActionContinue
	ActionMask     = report.ActionMask
	ActionWindDown = report.ActionWindDown
	ActionRestart  = report.ActionRestart
)
