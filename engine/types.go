package engine

import (
	"github.com/ctxhost/ctxhost/host"
	"github.com/ctxhost/ctxhost/sdk"
)

// The engine's callers exchange these values with sessions. They are the
// plugin SDK's and the host's own types (plugins and assemblers see the
// same values), named here so that callers of the engine need no other
// package.
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
	// CompactionReport is what one compaction did, step by step.
	CompactionReport = host.CompactionReport
	// SessionMetrics are a session's counters (Session.Metrics).
	SessionMetrics = host.Metrics
)
