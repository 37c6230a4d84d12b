package config

import "github.com/hashicorp/hcl/v2"

// Block type names.
const (
	blockVariable  = "variable"
	blockModel     = "model"
	blockPlugin    = "plugin"
	blockAssembler = "assembler"
	blockContext   = "context"
	blockAgent     = "agent"
	blockHost      = "host"
	blockServer    = "server"
	blockUpstream  = "upstream"
	blockSumm      = "summarizer"
)

var rootSchema = &hcl.BodySchema{Blocks: []hcl.BlockHeaderSchema{
	{Type: blockVariable, LabelNames: []string{"name"}},
	{Type: blockModel, LabelNames: []string{"name"}},
	{Type: blockPlugin, LabelNames: []string{"name"}},
	{Type: blockAssembler, LabelNames: []string{"name"}},
	{Type: blockContext, LabelNames: []string{"name"}},
	{Type: blockAgent, LabelNames: []string{"name"}},
	{Type: blockHost},
	{Type: blockServer},
	{Type: blockUpstream, LabelNames: []string{"name"}},
	{Type: blockSumm, LabelNames: []string{"name"}},
}}

// summarizerSchema lists "api_key" only to explain that it is not accepted.
var summarizerSchema = attrSchema([]string{"kind", "base_url", "model"}, "prompt", "max_tokens", "timeout",
	"api_key_env", "caller_key", "concurrency", "input_price", "output_price", "api_key")

var summarizeSchema = attrSchema(nil, "summarizer", "plugin", "max_tokens", "wait", "wait_timeout", "tool_output_tokens")

var variableSchema = attrSchema(nil, "type", "default", "description")

var modelSchema = withBlocks(attrSchema([]string{"context_window"}, "reserved_for_response", "encoding", "match"), "pricing")

var pricingSchema = attrSchema(nil, "input", "cache_read", "cache_write", "min_cacheable", "granularity")

var pluginSchema = withBlocks(attrSchema(nil, "path", "builtin",
	"sha256", "priority", "compactable", "required", "timeout", "restore_timeout", "max_component_bytes", "auto_mtls", "env", "keep_at_least"), "config")

var assemblerSchema = attrSchema(nil, "path", "builtin", "sha256", "format", "options", "timeout", "auto_mtls", "env")

var contextSchema = withBlocks(attrSchema([]string{"model"},
	"system_prompt", "instructions", "plugins", "assembler", "mode", "fail_on_unmet_target", "allow_over_window"),
	"strategy", "history", "facts", "fresh", "multi_agent", "memory", "summarize")

var memorySchema = &hcl.BodySchema{
	Attributes: []hcl.AttributeSchema{{Name: "agent"}, {Name: "groups"}, {Name: "tools"}},
	Blocks:     []hcl.BlockHeaderSchema{{Type: "block", LabelNames: []string{"label"}}},
}

var memoryBlockSchema = attrSchema(nil, "scope", "group", "description", "value", "limit", "unit", "read_only")

var strategySchema = attrSchema(nil, "type", "warning_threshold", "critical_threshold", "target", "carryover_turns", "min_free")

var historySchema = attrSchema(nil, "preserve_recent", "keep_first", "infer", "recall_tool", "window", "priority", "kinds")

var factsSchema = attrSchema(nil, "enabled", "max_tokens", "share")

var freshSchema = attrSchema(nil, "system_prompt_tokens", "task_spec_tokens", "reserved_tokens", "shares",
	"repo_map_tokens", "codebase_docs_tokens", "repo_map_plugin", "code_search_plugin", "codebase_docs_plugin", "relevant_files_plugin", "root")

var multiAgentSchema = attrSchema(nil, "window_size", "max_bytes", "team_task_max_bytes", "marker_patterns", "dedup")

var agentSchema = attrSchema(nil, "type", "assembler", "format", "system_instruction",
	"instruction_file", "window_size", "speaker_type")

var hostSchema = attrSchema(nil, "log_level", "log_format", "store", "checkpoints_keep_last", "checkpoints_max_age", "checkpoints_sweep")

// serverSchema lists "token" only to explain that it is not accepted.
var serverSchema = attrSchema(nil, "listen", "token_file", "tls_cert", "tls_key", "max_request_bytes", "max_append_messages", "max_append_bytes", "lock_wait", "admission_wait", "compress_min_bytes", "shared_store", "memory_limit", "token",
	"inspector", "trace_endpoint", "trace_protocol", "trace_sample_ratio")

// upstreamSchema lists "api_key" only to explain that it is not accepted.
var upstreamSchema = attrSchema([]string{"kind", "base_url"}, "profile", "timeout", "max_answer_bytes", "fallback_model", "tool_rounds", "api_key")

func attrSchema(required []string, optional ...string) *hcl.BodySchema {
	s := &hcl.BodySchema{}
	for _, n := range required {
		s.Attributes = append(s.Attributes, hcl.AttributeSchema{Name: n, Required: true})
	}
	for _, n := range optional {
		s.Attributes = append(s.Attributes, hcl.AttributeSchema{Name: n})
	}
	return s
}

func withBlocks(s *hcl.BodySchema, blocks ...string) *hcl.BodySchema {
	for _, b := range blocks {
		s.Blocks = append(s.Blocks, hcl.BlockHeaderSchema{Type: b})
	}
	return s
}

// singleBlock returns the only block of type typ in content, or nil; a
// repeated block is reported.
func singleBlock(content *hcl.BodyContent, typ string, diags *hcl.Diagnostics) *hcl.Block {
	var first *hcl.Block
	for _, b := range content.Blocks.OfType(typ) {
		if first != nil {
			*diags = append(*diags, &hcl.Diagnostic{
				Severity: hcl.DiagError,
				Summary:  "Duplicate " + typ + " block",
				Detail:   "Only one " + typ + " block is allowed here; the first one is at " + first.DefRange.String() + ".",
				Subject:  b.DefRange.Ptr(),
			})
			continue
		}
		first = b
	}
	return first
}
