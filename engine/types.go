package engine

import (
	"github.com/ctxhost/ctxhost/report"
	"github.com/ctxhost/ctxhost/sdk"
)

// The engine's callers exchange these values with sessions. They are the
// plugin SDK's types (plugins and assemblers see the same values) and
// package report's (what a turn reports), named here so that callers of
// the engine need no other package.
type (
	// Message is one message of a conversation.
	Message = sdk.Message
	// Part is one part of a message's content (text, image, document).
	Part = sdk.Part
	// ToolCall is a tool call an assistant message makes.
	ToolCall = sdk.ToolCall
	// RequestTools are the tool definitions, tool choice and response
	// schema every payload of a session carries (Session.SetTools).
	RequestTools = sdk.RequestTools
	// ToolDefinition is one tool a model may call.
	ToolDefinition = sdk.ToolDefinition
	// ToolChoice says which tool the model must call, if any.
	ToolChoice = sdk.ToolChoice
	// ResponseFormat is the JSON schema a response must follow.
	ResponseFormat = sdk.ResponseFormat
	// Budget is a turn's token budget: window, reserve, use, calibration.
	Budget = sdk.Budget
	// Prepared is a conversation turn's context: payload, budget,
	// per-component usage, compaction, pressure action, cache cost.
	Prepared = report.Prepared
	// ComponentUsage is what one component cost in a turn.
	ComponentUsage = report.ComponentUsage
	// CompactionReport is what one compaction did, step by step.
	CompactionReport = report.CompactionReport
	// CompactionStep is one component's part in a compaction.
	CompactionStep = report.CompactionStep
	// CacheReport is a turn's cost with prompt caching, beside the
	// unmanaged history's.
	CacheReport = report.CacheReport
	// PressureAction is what the agent loop should do about the budget.
	PressureAction = report.PressureAction
	// ViewReport is the view a multi-agent turn was assembled from.
	ViewReport = report.ViewReport
	// SessionMetrics are a session's counters (Session.Metrics).
	SessionMetrics = report.Metrics
)
