package config

import (
	"time"

	"github.com/ctxhost/ctxhost/tokenizer"
	"github.com/hashicorp/hcl/v2"
)

// Defaults of every optional setting (see REFERENCE.md).
const (
	DefaultReservedForResponse = 4096
	DefaultEncoding            = tokenizer.CL100kBase
	DefaultTimeout             = 10 * time.Second
	DefaultRestoreTimeout      = 60 * time.Second
	DefaultStrategy            = "proactive"
	// DefaultCallPathStrategy is the strategy of a profile an upstream
	// serves when its strategy block names none: the call path sends what
	// the agent sent while it fits, and compacts only what is over.
	DefaultCallPathStrategy    = "lazy"
	DefaultWarningThreshold    = 0.7
	DefaultCriticalThreshold   = 0.9
	DefaultTarget              = 0.6
	DefaultCarryoverTurns      = 4
	DefaultPreserveRecent      = 5
	DefaultInfer               = "auto"
	DefaultHistoryPriority     = 6
	DefaultFactsMaxTokens      = 400
	DefaultBlockLimit          = 5000
	DefaultFactsShare          = 0.10
	DefaultWindowSize          = 5
	DefaultMaxBytes            = 768 * 1024
	DefaultTeamTaskMaxBytes    = 5 * 1024
	DefaultMarkerPattern       = `\[NEXT:[^\]]+\]`
	DefaultSystemPromptTokens  = 2000
	DefaultTaskSpecTokens      = 1000
	DefaultReservedTokens      = 16000
	DefaultRepoMapTokens       = 2000
	DefaultCodebaseDocsTokens  = 3000
	DefaultRepoMapPlugin       = "repo_map"
	DefaultCodeSearchPlugin    = "code_search"
	DefaultCodebaseDocsPlugin  = "codebase_docs"
	DefaultRelevantFilesPlugin = "relevant_files"
	DefaultLogLevel            = "info"
	DefaultLogFormat           = "text"
	DefaultSpeakerType         = "ai"
	DefaultListen              = "127.0.0.1:7400"
	DefaultMaxRequestBytes     = 8 << 20
	DefaultMaxAppendMessages   = 1000
	DefaultMaxAppendBytes      = 4 << 20
	DefaultLockWait            = 10 * time.Second
	DefaultAdmissionWait       = 2 * time.Second
	DefaultCompressMinBytes    = 64 << 10
	DefaultMemoryLimit         = 160 << 20
	DefaultSummaryMaxTokens    = 512
	DefaultSummaryTimeout      = 60 * time.Second
	DefaultSummaryConcurrency  = 2
	DefaultSummaryWaitTimeout  = 10 * time.Second
	DefaultSummaryInputPrice   = 1
	DefaultSummaryOutputPrice  = 4
)

// DefaultShares returns the default dynamic shares of fresh contexts:
// files 60% / code results 25% / memories 15%, mapped to the
// first-party components (files read and commands run arrive as tool
// outputs; the plan stands in for the task-relevant code results).
func DefaultShares() map[string]float64 {
	return map[string]float64{"tool_outputs": 0.60, "plan": 0.25, "memory": 0.15}
}

func decodeModel(fb fileBlock, diags *hcl.Diagnostics) *Model {
	m := &Model{Name: fb.block.Labels[0], Source: Source{DeclRange: fb.block.DefRange},
		ReservedForResponse: DefaultReservedForResponse, Encoding: DefaultEncoding}
	content, d := fb.block.Body.Content(modelSchema)
	*diags = append(*diags, d...)
	r := newAttrReader(content, modelSchema, fb.ctx, &m.Source, diags)
	r.integer("context_window", &m.ContextWindow)
	r.integer("reserved_for_response", &m.ReservedForResponse)
	r.str("encoding", &m.Encoding)
	r.strings("match", &m.Match)
	if b := singleBlock(content, "pricing", diags); b != nil {
		pr := &Pricing{Source: Source{DeclRange: b.DefRange}}
		r := blockReader(b.Body, pricingSchema, fb.ctx, &pr.Source, diags)
		r.number("input", &pr.Input)
		r.number("cache_read", &pr.CacheRead)
		r.number("cache_write", &pr.CacheWrite)
		r.integer("min_cacheable", &pr.MinCacheable)
		r.integer("granularity", &pr.Granularity)
		m.Pricing = pr
	}
	return m
}

func decodePlugin(fb fileBlock, diags *hcl.Diagnostics) *Plugin {
	p := &Plugin{Name: fb.block.Labels[0], Source: Source{DeclRange: fb.block.DefRange},
		Timeout: DefaultTimeout, RestoreTimeout: DefaultRestoreTimeout, Config: hcl.EmptyBody(), EvalContext: fb.ctx, AutoMTLS: true}
	content, d := fb.block.Body.Content(pluginSchema)
	*diags = append(*diags, d...)
	r := newAttrReader(content, pluginSchema, fb.ctx, &p.Source, diags)
	r.str("path", &p.Path)
	p.Path = resolvePath(fb.dir, p.Path)
	r.str("builtin", &p.Builtin)
	r.str("sha256", &p.SHA256)
	r.intPtr("priority", &p.Priority)
	r.boolPtr("compactable", &p.Compactable)
	r.boolean("required", &p.Required)
	r.duration("timeout", &p.Timeout)
	r.duration("restore_timeout", &p.RestoreTimeout)
	r.integer("max_component_bytes", &p.MaxComponentBytes)
	r.boolean("auto_mtls", &p.AutoMTLS)
	r.stringMap("env", &p.Env)
	r.integer("keep_at_least", &p.KeepAtLeast)
	if b := singleBlock(content, "config", diags); b != nil {
		p.Config = b.Body
	}
	return p
}

func decodeAssembler(fb fileBlock, diags *hcl.Diagnostics) *Assembler {
	a := &Assembler{Name: fb.block.Labels[0], Source: Source{DeclRange: fb.block.DefRange},
		Timeout: DefaultTimeout, Options: map[string]string{}, AutoMTLS: true}
	r := blockReader(fb.block.Body, assemblerSchema, fb.ctx, &a.Source, diags)
	r.str("path", &a.Path)
	a.Path = resolvePath(fb.dir, a.Path)
	r.str("builtin", &a.Builtin)
	r.str("sha256", &a.SHA256)
	r.str("format", &a.Format)
	r.stringMap("options", &a.Options)
	r.duration("timeout", &a.Timeout)
	r.boolean("auto_mtls", &a.AutoMTLS)
	r.stringMap("env", &a.Env)
	return a
}

func decodeContext(fb fileBlock, diags *hcl.Diagnostics) *Context {
	c := &Context{Name: fb.block.Labels[0], Source: Source{DeclRange: fb.block.DefRange}, Mode: ModeConversation,
		Strategy: Strategy{Type: DefaultStrategy, WarningThreshold: DefaultWarningThreshold,
			CriticalThreshold: DefaultCriticalThreshold, Target: DefaultTarget, CarryoverTurns: DefaultCarryoverTurns},
		History: History{PreserveRecent: DefaultPreserveRecent, KeepFirst: true, Infer: DefaultInfer, Window: DefaultWindowSize,
			Priority: DefaultHistoryPriority},
		Fresh: Fresh{SystemPromptTokens: DefaultSystemPromptTokens, TaskSpecTokens: DefaultTaskSpecTokens,
			ReservedTokens: DefaultReservedTokens, Shares: DefaultShares(),
			RepoMapTokens: DefaultRepoMapTokens, CodebaseDocsTokens: DefaultCodebaseDocsTokens,
			RepoMapPlugin: DefaultRepoMapPlugin, CodeSearchPlugin: DefaultCodeSearchPlugin, CodebaseDocsPlugin: DefaultCodebaseDocsPlugin,
			RelevantFilesPlugin: DefaultRelevantFilesPlugin},
		MultiAgent: MultiAgent{WindowSize: DefaultWindowSize, MaxBytes: DefaultMaxBytes,
			TeamTaskMaxBytes: DefaultTeamTaskMaxBytes, MarkerPatterns: []string{DefaultMarkerPattern}, Dedup: true},
	}
	content, d := fb.block.Body.Content(contextSchema)
	*diags = append(*diags, d...)
	r := newAttrReader(content, contextSchema, fb.ctx, &c.Source, diags)
	r.str("model", &c.Model)
	r.str("system_prompt", &c.SystemPrompt)
	r.str("instructions", &c.Instructions)
	r.strings("plugins", &c.Plugins)
	r.str("assembler", &c.Assembler)
	r.str("mode", &c.Mode)
	r.boolean("fail_on_unmet_target", &c.FailOnUnmetTarget)
	r.boolean("allow_over_window", &c.AllowOverWindow)

	if b := singleBlock(content, "strategy", diags); b != nil {
		s := &c.Strategy
		s.DeclRange = b.DefRange
		r := blockReader(b.Body, strategySchema, fb.ctx, &s.Source, diags)
		r.str("type", &s.Type)
		r.number("warning_threshold", &s.WarningThreshold)
		r.number("critical_threshold", &s.CriticalThreshold)
		r.number("target", &s.Target)
		r.integer("carryover_turns", &s.CarryoverTurns)
		r.integer("min_free", &s.MinFree)
	}
	if b := singleBlock(content, "history", diags); b != nil {
		h := &c.History
		h.DeclRange = b.DefRange
		r := blockReader(b.Body, historySchema, fb.ctx, &h.Source, diags)
		r.integer("preserve_recent", &h.PreserveRecent)
		r.boolean("keep_first", &h.KeepFirst)
		r.str("infer", &h.Infer)
		r.boolean("recall_tool", &h.RecallTool)
		r.integer("window", &h.Window)
		r.integer("priority", &h.Priority)
		r.stringMap("kinds", &h.Kinds)
	}
	if b := singleBlock(content, "facts", diags); b != nil {
		f := &c.Facts
		f.DeclRange = b.DefRange
		f.Enabled, f.MaxTokens, f.Share = true, DefaultFactsMaxTokens, DefaultFactsShare
		r := blockReader(b.Body, factsSchema, fb.ctx, &f.Source, diags)
		r.boolean("enabled", &f.Enabled)
		r.integer("max_tokens", &f.MaxTokens)
		r.number("share", &f.Share)
	}
	if b := singleBlock(content, "summarize", diags); b != nil {
		s := &c.Summarize
		s.DeclRange = b.DefRange
		s.Enabled, s.Wait, s.WaitTimeout = true, "never", DefaultSummaryWaitTimeout
		r := blockReader(b.Body, summarizeSchema, fb.ctx, &s.Source, diags)
		r.str("summarizer", &s.Summarizer)
		r.str("plugin", &s.Plugin)
		r.integer("max_tokens", &s.MaxTokens)
		r.str("wait", &s.Wait)
		r.duration("wait_timeout", &s.WaitTimeout)
		r.integer("tool_output_tokens", &s.ToolOutputTokens)
	}
	if b := singleBlock(content, "fresh", diags); b != nil {
		f := &c.Fresh
		f.DeclRange = b.DefRange
		r := blockReader(b.Body, freshSchema, fb.ctx, &f.Source, diags)
		r.integer("system_prompt_tokens", &f.SystemPromptTokens)
		r.integer("task_spec_tokens", &f.TaskSpecTokens)
		r.integer("reserved_tokens", &f.ReservedTokens)
		r.numberMap("shares", &f.Shares)
		r.integer("repo_map_tokens", &f.RepoMapTokens)
		r.integer("codebase_docs_tokens", &f.CodebaseDocsTokens)
		r.str("repo_map_plugin", &f.RepoMapPlugin)
		r.str("code_search_plugin", &f.CodeSearchPlugin)
		r.str("codebase_docs_plugin", &f.CodebaseDocsPlugin)
		r.str("relevant_files_plugin", &f.RelevantFilesPlugin)
		r.str("root", &f.Root)
		if f.Root != "" {
			f.Root = resolvePath(fb.dir, f.Root)
		}
	}
	if b := singleBlock(content, "multi_agent", diags); b != nil {
		m := &c.MultiAgent
		m.DeclRange = b.DefRange
		r := blockReader(b.Body, multiAgentSchema, fb.ctx, &m.Source, diags)
		r.integer("window_size", &m.WindowSize)
		r.integer("max_bytes", &m.MaxBytes)
		r.integer("team_task_max_bytes", &m.TeamTaskMaxBytes)
		r.strings("marker_patterns", &m.MarkerPatterns)
		r.boolean("dedup", &m.Dedup)
	}
	if b := singleBlock(content, "memory", diags); b != nil {
		decodeMemory(fb, b, &c.Memory, diags)
	}
	syncWindow(c, diags)
	return c
}

// decodeMemory reads a context's memory block.
func decodeMemory(fb fileBlock, b *hcl.Block, m *Memory, diags *hcl.Diagnostics) {
	m.DeclRange = b.DefRange
	content, d := b.Body.Content(memorySchema)
	*diags = append(*diags, d...)
	r := newAttrReader(content, memorySchema, fb.ctx, &m.Source, diags)
	r.str("agent", &m.Agent)
	r.strings("groups", &m.Groups)
	r.boolean("tools", &m.Tools)
	for _, bb := range content.Blocks.OfType("block") {
		mb := &MemoryBlock{Label: bb.Labels[0], Source: Source{DeclRange: bb.DefRange}, Scope: "session", Limit: DefaultBlockLimit, Unit: "chars"}
		r := blockReader(bb.Body, memoryBlockSchema, fb.ctx, &mb.Source, diags)
		r.str("scope", &mb.Scope)
		r.str("group", &mb.Group)
		r.str("description", &mb.Description)
		r.str("value", &mb.Value)
		r.integer("limit", &mb.Limit)
		r.str("unit", &mb.Unit)
		r.boolean("read_only", &mb.ReadOnly)
		m.Blocks = append(m.Blocks, mb)
	}
}

// syncWindow makes history.window and multi_agent.window_size one setting:
// whichever is set wins; setting both to different values is an error.
func syncWindow(c *Context, diags *hcl.Diagnostics) {
	h, m := c.History.IsSet("window"), c.MultiAgent.IsSet("window_size")
	switch {
	case h && m && c.History.Window != c.MultiAgent.WindowSize:
		*diags = append(*diags, &hcl.Diagnostic{
			Severity: hcl.DiagError,
			Summary:  "Conflicting window settings",
			Detail:   "history.window and multi_agent.window_size are the same setting; set only one (the other is at " + c.History.Range("window").String() + ").",
			Subject:  c.MultiAgent.Range("window_size").Ptr(),
		})
	case h:
		c.MultiAgent.WindowSize = c.History.Window
	case m:
		c.History.Window = c.MultiAgent.WindowSize
	}
}

func decodeAgent(fb fileBlock, diags *hcl.Diagnostics) *Agent {
	a := &Agent{Name: fb.block.Labels[0], Source: Source{DeclRange: fb.block.DefRange}, SpeakerType: DefaultSpeakerType}
	r := blockReader(fb.block.Body, agentSchema, fb.ctx, &a.Source, diags)
	r.str("type", &a.Type)
	r.str("assembler", &a.Assembler)
	r.str("format", &a.Format)
	r.str("system_instruction", &a.SystemInstruction)
	r.str("instruction_file", &a.InstructionFile)
	r.intPtr("window_size", &a.WindowSize)
	r.str("speaker_type", &a.SpeakerType)
	if a.InstructionFile != "" {
		a.InstructionFile = resolvePath(fb.dir, a.InstructionFile)
		a.Instruction = readInstructionFile(r, a.InstructionFile)
	}
	return a
}

func decodeHost(fb fileBlock, h *Host, diags *hcl.Diagnostics) {
	h.DeclRange = fb.block.DefRange
	r := blockReader(fb.block.Body, hostSchema, fb.ctx, &h.Source, diags)
	r.str("log_level", &h.LogLevel)
	r.str("log_format", &h.LogFormat)
	r.str("store", &h.Store)
	h.Store = resolveStore(fb.dir, h.Store)
	r.integer("checkpoints_keep_last", &h.CheckpointsKeepLast)
	r.duration("checkpoints_max_age", &h.CheckpointsMaxAge)
	r.duration("checkpoints_sweep", &h.CheckpointsSweep)
}

func decodeServer(fb fileBlock, s *Server, diags *hcl.Diagnostics) {
	s.DeclRange = fb.block.DefRange
	r := blockReader(fb.block.Body, serverSchema, fb.ctx, &s.Source, diags)
	r.str("listen", &s.Listen)
	r.str("token_file", &s.TokenFile)
	r.str("tls_cert", &s.TLSCert)
	r.str("tls_key", &s.TLSKey)
	r.integer("max_request_bytes", &s.MaxRequestBytes)
	r.integer("max_append_messages", &s.MaxAppendMessages)
	r.integer("max_append_bytes", &s.MaxAppendBytes)
	r.duration("lock_wait", &s.LockWait)
	r.duration("admission_wait", &s.AdmissionWait)
	r.integer("compress_min_bytes", &s.CompressMinBytes)
	r.boolean("shared_store", &s.SharedStore)
	r.integer("memory_limit", &s.MemoryLimit)
	r.boolean("inspector", &s.Inspector)
	r.str("trace_endpoint", &s.TraceEndpoint)
	r.str("trace_protocol", &s.TraceProtocol)
	r.number("trace_sample_ratio", &s.TraceSampleRatio)
	var token string
	r.str("token", &token)
	if s.IsSet("token") {
		r.errorAt("token", "Token in HCL", "The server token is never read from the configuration: put it in a file named by token_file (readable only by you), or in the environment variable CTXHOST_TOKEN.")
	}
	s.TokenFile = resolvePath(fb.dir, s.TokenFile)
	s.TLSCert = resolvePath(fb.dir, s.TLSCert)
	s.TLSKey = resolvePath(fb.dir, s.TLSKey)
}

func decodeUpstream(fb fileBlock, diags *hcl.Diagnostics) *Upstream {
	u := &Upstream{Name: fb.block.Labels[0], Source: Source{DeclRange: fb.block.DefRange}, Timeout: DefaultUpstreamTimeout, MaxAnswerBytes: DefaultMaxAnswerBytes,
		ToolRounds: DefaultToolRounds}
	r := blockReader(fb.block.Body, upstreamSchema, fb.ctx, &u.Source, diags)
	r.str("kind", &u.Kind)
	r.str("base_url", &u.BaseURL)
	r.str("profile", &u.Profile)
	r.duration("timeout", &u.Timeout)
	r.integer("max_answer_bytes", &u.MaxAnswerBytes)
	r.str("fallback_model", &u.FallbackModel)
	r.integer("tool_rounds", &u.ToolRounds)
	var key string
	r.str("api_key", &key)
	if u.IsSet("api_key") {
		r.errorAt("api_key", "API key in HCL", "An upstream never holds an API key: the calling agent sends its own key (Authorization, x-api-key or x-goog-api-key), and ctxhost forwards it to the upstream without storing it.")
	}
	return u
}

func decodeSummarizer(fb fileBlock, diags *hcl.Diagnostics) *Summarizer {
	s := &Summarizer{Name: fb.block.Labels[0], Source: Source{DeclRange: fb.block.DefRange},
		MaxTokens: DefaultSummaryMaxTokens, Timeout: DefaultSummaryTimeout, Concurrency: DefaultSummaryConcurrency,
		InputPrice: DefaultSummaryInputPrice, OutputPrice: DefaultSummaryOutputPrice}
	r := blockReader(fb.block.Body, summarizerSchema, fb.ctx, &s.Source, diags)
	r.str("kind", &s.Kind)
	r.str("base_url", &s.BaseURL)
	r.str("model", &s.Model)
	r.str("prompt", &s.Prompt)
	r.integer("max_tokens", &s.MaxTokens)
	r.duration("timeout", &s.Timeout)
	r.str("api_key_env", &s.APIKeyEnv)
	r.boolean("caller_key", &s.CallerKey)
	r.integer("concurrency", &s.Concurrency)
	r.number("input_price", &s.InputPrice)
	r.number("output_price", &s.OutputPrice)
	var key string
	r.str("api_key", &key)
	if s.IsSet("api_key") {
		r.errorAt("api_key", "API key in HCL", "A summarizer never holds an API key: name the environment variable that holds it with api_key_env, or set caller_key = true to use the key of the call that triggers the summary (the call path).")
	}
	return s
}

// blockReader decodes body against schema and returns a reader of its
// attributes.
func blockReader(body hcl.Body, schema *hcl.BodySchema, ctx *hcl.EvalContext, src *Source, diags *hcl.Diagnostics) *attrReader {
	content, d := body.Content(schema)
	*diags = append(*diags, d...)
	return newAttrReader(content, schema, ctx, src, diags)
}
