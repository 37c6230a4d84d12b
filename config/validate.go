package config

import (
	"errors"
	"fmt"
	"net"
	"net/url"
	"path"
	"regexp"
	"sort"
	"strings"
	"unicode/utf8"

	"github.com/ctxhost/ctxhost/sdk"
	"github.com/ctxhost/ctxhost/tokenizer"
	"github.com/hashicorp/hcl/v2"
)

// Allowed values of enumerated settings.
var (
	Encodings     = []string{tokenizer.CL100kBase, tokenizer.O200kBase, tokenizer.Approximate}
	StrategyTypes = []string{"lazy", "proactive", "adaptive", "graduated", "cache"}
	// MessageKinds are the message kinds of the history `kinds` attribute.
	MessageKinds    = sdk.Kinds
	Modes           = []string{ModeConversation, ModeFresh}
	LogLevels       = []string{"trace", "debug", "info", "warn", "error"}
	LogFormats      = []string{"text", "json"}
	SpeakerTypes    = []string{"ai", "human"}
	KnownAgentTypes = []string{AgentClaudeCode, AgentOpenAICodex, AgentGoogleGemini}
)

// Priority bounds of plugin and history priorities.
const (
	MinPriority = 0
	MaxPriority = 100
)

// problems collects validation diagnostics.
type problems struct{ diags hcl.Diagnostics }

// source checks that a plugin or assembler block (what: "Plugin" or
// "Assembler") names exactly one of a binary (path, with its process
// settings, checked by process) and a built-in one of builtins.
func (p *problems) source(src Source, what, name, builtin string, builtins []string, process func()) {
	switch {
	case src.IsSet("builtin") && src.IsSet("path"):
		p.errorf(src, "builtin", "Conflicting "+strings.ToLower(what)+" source",
			"%s %q sets both path and builtin; set path to run a binary, or builtin to run a first-party one inside ctxhost.", what, name)
	case src.IsSet("builtin"):
		p.oneOf(src, "builtin", "built-in "+strings.ToLower(what), builtin, builtins)
		for _, attr := range []string{"sha256", "auto_mtls", "env"} {
			if src.IsSet(attr) {
				p.errorf(src, attr, "Not for a built-in "+strings.ToLower(what),
					"%s %q runs inside ctxhost (builtin = %q); %s applies only to a process (path).", what, name, builtin, attr)
			}
		}
	case !src.IsSet("path"):
		p.add(hcl.DiagError, src.DeclRange, "Missing "+strings.ToLower(what)+" source",
			"%s %q needs path (a binary) or builtin (one of %s).", what, name, strings.Join(builtins, ", "))
	default:
		process()
	}
}

func (p *problems) add(sev hcl.DiagnosticSeverity, rng hcl.Range, summary, format string, a ...any) {
	p.diags = append(p.diags, &hcl.Diagnostic{Severity: sev, Summary: summary,
		Detail: fmt.Sprintf(format, a...), Subject: rng.Ptr()})
}

// errorf reports an error at attribute attr of src, unless that attribute
// already failed to decode (or is a missing required one).
func (p *problems) errorf(src Source, attr, summary, format string, a ...any) {
	if src.invalid[attr] {
		return
	}
	p.add(hcl.DiagError, src.Range(attr), summary, format, a...)
}

// warnf reports a warning at attribute attr of src, unless that attribute
// already failed to decode.
func (p *problems) warnf(src Source, attr, summary, format string, a ...any) {
	if src.invalid[attr] {
		return
	}
	p.add(hcl.DiagWarning, src.Range(attr), summary, format, a...)
}

// oneOf reports value at attr unless it is in allowed.
func (p *problems) oneOf(src Source, attr, what, value string, allowed []string) {
	for _, a := range allowed {
		if value == a {
			return
		}
	}
	p.errorf(src, attr, "Invalid "+what, "%q is not a valid %s; use one of %s.", value, what, strings.Join(allowed, ", "))
}

// env reports an environment variable name that a process cannot take
// (empty, with "=" or NUL) or a value with NUL.
func (p *problems) env(src Source, env map[string]string) {
	names := make([]string, 0, len(env))
	for k := range env {
		names = append(names, k)
	}
	sort.Strings(names)
	for _, k := range names {
		if k == "" || strings.ContainsAny(k, "=\x00") || strings.ContainsRune(env[k], 0) {
			p.errorf(src, "env", "Invalid environment variable", "%q=%q cannot be set for a process: a name is not empty and has no \"=\" or NUL, a value has no NUL.", k, env[k])
		}
	}
}

// atLeast reports value at attr when it is below min.
func (p *problems) atLeast(src Source, attr string, value, min int) {
	if value < min {
		p.errorf(src, attr, "Invalid "+attr, "%s must be at least %d, got %d.", attr, min, value)
	}
}

// priority reports a priority outside MinPriority..MaxPriority.
func (p *problems) priority(src Source, attr string, value int) {
	if value < MinPriority || value > MaxPriority {
		p.errorf(src, attr, "Priority out of range", "%s must be between %d and %d, got %d.", attr, MinPriority, MaxPriority, value)
	}
}

// validate checks values and cross-references and the plugin binaries.
func (c *Config) validate() hcl.Diagnostics {
	p := &problems{}
	for _, m := range c.Models {
		p.atLeast(m.Source, "context_window", m.ContextWindow, 1)
		p.atLeast(m.Source, "reserved_for_response", m.ReservedForResponse, 0)
		if m.ContextWindow > 0 && m.ReservedForResponse >= m.ContextWindow {
			p.errorf(m.Source, "reserved_for_response", "Reserved tokens exceed the window",
				"reserved_for_response (%d) must be smaller than context_window (%d).", m.ReservedForResponse, m.ContextWindow)
		}
		p.oneOf(m.Source, "encoding", "encoding", m.Encoding, Encodings)
		for _, pat := range m.Match {
			if _, err := path.Match(pat, ""); err != nil || pat == "" {
				p.errorf(m.Source, "match", "Invalid model pattern", "match pattern %q is not a glob pattern (path.Match syntax: *, ?, [a-z]).", pat)
			}
		}
		if pr := m.Pricing; pr != nil {
			for _, f := range []struct {
				name  string
				value float64
			}{{"input", pr.Input}, {"cache_read", pr.CacheRead}, {"cache_write", pr.CacheWrite}} {
				if f.value < 0 {
					p.errorf(pr.Source, f.name, "Negative price", "%s is %g; prices must not be negative.", f.name, f.value)
				}
			}
			p.atLeast(pr.Source, "min_cacheable", pr.MinCacheable, 0)
			p.atLeast(pr.Source, "granularity", pr.Granularity, 0)
		}
	}
	for _, pl := range c.Plugins {
		if pl.Priority != nil {
			p.priority(pl.Source, "priority", *pl.Priority)
		}
		p.source(pl.Source, "Plugin", pl.Name, pl.Builtin, BuiltinPlugins, func() {
			p.binary(pl.Source, pl.Path, pl.SHA256, !pl.Required)
			p.env(pl.Source, pl.Env)
		})
		if pl.IsSet("max_component_bytes") {
			p.atLeast(pl.Source, "max_component_bytes", pl.MaxComponentBytes, 1024)
		}
		p.atLeast(pl.Source, "keep_at_least", pl.KeepAtLeast, 0)
	}
	for _, a := range c.Assemblers {
		if a.Format == "" && a.IsSet("format") {
			p.errorf(a.Source, "format", "Invalid format", "format must not be empty; leave it out to use the assembler's first declared format.")
		}
		p.source(a.Source, "Assembler", a.Name, a.Builtin, BuiltinAssemblers, func() {
			p.binary(a.Source, a.Path, a.SHA256, false)
			p.env(a.Source, a.Env)
		})
	}
	for _, x := range c.Contexts {
		c.validateContext(p, x)
	}
	for _, a := range c.Agents {
		c.validateAgent(p, a)
	}
	p.oneOf(c.Host.Source, "log_level", "log level", c.Host.LogLevel, LogLevels)
	p.oneOf(c.Host.Source, "log_format", "log format", c.Host.LogFormat, LogFormats)
	if c.Host.CheckpointsKeepLast < 0 {
		p.errorf(c.Host.Source, "checkpoints_keep_last", "Invalid checkpoint retention", "checkpoints_keep_last is %d: want 0 (any number) or more.", c.Host.CheckpointsKeepLast)
	}
	if c.Host.CheckpointsMaxAge < 0 || c.Host.CheckpointsSweep < 0 {
		p.errorf(c.Host.Source, "checkpoints_max_age", "Invalid checkpoint retention", "checkpoints_max_age and checkpoints_sweep must not be negative.")
	}
	c.validateServer(p)
	c.validateUpstreams(p)
	c.validateSummarizers(p)
	return p.diags
}

// validateSummarizers checks each summarizer block: a known kind, a base
// URL as an upstream's, a model, positive limits and prices not negative.
func (c *Config) validateSummarizers(p *problems) {
	seen := map[string]bool{}
	for _, s := range c.Summarizers {
		if seen[s.Name] {
			p.errorf(s.Source, "", "Duplicate summarizer", "summarizer %q is declared twice.", s.Name)
		}
		seen[s.Name] = true
		p.oneOf(s.Source, "kind", "summarizer kind", s.Kind, SummarizerKinds)
		if err := checkBaseURL(s.BaseURL); err != nil {
			p.errorf(s.Source, "base_url", "Invalid base URL", "base_url: %v.", err)
		}
		if s.Model == "" {
			p.errorf(s.Source, "model", "No model", "summarizer %q names no model.", s.Name)
		}
		p.atLeast(s.Source, "max_tokens", s.MaxTokens, 16)
		p.atLeast(s.Source, "concurrency", s.Concurrency, 1)
		if s.Timeout <= 0 {
			p.errorf(s.Source, "timeout", "Invalid timeout", "timeout must be positive.")
		}
		if s.InputPrice < 0 || s.OutputPrice < 0 {
			p.errorf(s.Source, "input_price", "Invalid price", "input_price and output_price must not be negative.")
		}
	}
}

// validateSummarize checks a context's summarize block: one summarizer or
// one plugin, declared, and a known wait.
func (c *Config) validateSummarize(p *problems, x *Context) {
	s := x.Summarize
	if !s.Enabled {
		return
	}
	switch {
	case (s.Summarizer == "") == (s.Plugin == ""):
		p.errorf(s.Source, "summarizer", "One summarizer", "a summarize block names either a summarizer block (summarizer = \"NAME\") or a plugin with the summarize capability (plugin = \"NAME\").")
	case s.Summarizer != "" && c.Summarizer(s.Summarizer) == nil:
		p.errorf(s.Source, "summarizer", "Unknown summarizer", "summarizer %q names no summarizer block.", s.Summarizer)
	case s.Plugin != "" && c.Plugin(s.Plugin) == nil:
		p.errorf(s.Source, "plugin", "Unknown plugin", "plugin %q names no plugin block.", s.Plugin)
	}
	p.oneOf(s.Source, "wait", "summarize wait", s.Wait, SummaryWaits)
	if s.MaxTokens != 0 {
		p.atLeast(s.Source, "max_tokens", s.MaxTokens, 16)
	}
	if s.WaitTimeout <= 0 {
		p.errorf(s.Source, "wait_timeout", "Invalid wait_timeout", "wait_timeout must be positive.")
	}
	if s.ToolOutputTokens != 0 {
		p.atLeast(s.Source, "tool_output_tokens", s.ToolOutputTokens, 64)
	}
}

// validateUpstreams checks each upstream block: a known kind, an absolute
// http(s) base URL without query or fragment, a declared profile, and at
// most one upstream per kind (a kind's endpoints have one address).
func (c *Config) validateUpstreams(p *problems) {
	byKind := map[string]*Upstream{}
	for _, u := range c.Upstreams {
		p.oneOf(u.Source, "kind", "upstream kind", u.Kind, UpstreamKinds)
		if first := byKind[u.Kind]; first != nil && u.Kind != "" {
			p.errorf(u.Source, "kind", "Two upstreams of one kind",
				"upstream %q is also of kind %q; the %s endpoints forward to one upstream, so declare one upstream per kind.", first.Name, u.Kind, u.Kind)
		}
		byKind[u.Kind] = u
		if err := checkBaseURL(u.BaseURL); err != nil {
			p.errorf(u.Source, "base_url", "Invalid base URL", "base_url: %v.", err)
		}
		if u.Profile != "" && c.Context(u.Profile) == nil {
			p.errorf(u.Source, "profile", "Unknown context profile", "profile %q names no context block.", u.Profile)
		}
		if u.Profile == "" && len(c.Contexts) == 0 {
			p.errorf(u.Source, "profile", "No context profile", "upstream %q needs a context block to manage its sessions.", u.Name)
		}
		if u.Timeout <= 0 && u.IsSet("timeout") {
			p.errorf(u.Source, "timeout", "Invalid timeout", "timeout must be positive.")
		}
		p.atLeast(u.Source, "max_answer_bytes", u.MaxAnswerBytes, 1024)
		if u.ToolRounds < 0 || u.ToolRounds > MaxToolRounds {
			p.errorf(u.Source, "tool_rounds", "Invalid tool_rounds", "tool_rounds must be from 0 to %d, got %d.", MaxToolRounds, u.ToolRounds)
		}
		if u.FallbackModel != "" && c.matchModel(u.FallbackModel) == nil {
			p.errorf(u.Source, "fallback_model", "Fallback model without a window",
				"fallback_model %q is matched by no model block's match patterns, so its window is unknown: declare a model block matching it.", u.FallbackModel)
		}
	}
}

// matchModel is the first model block whose match patterns match the
// provider model name, or nil.
func (c *Config) matchModel(name string) *Model {
	for _, m := range c.Models {
		for _, pat := range m.Match {
			if ok, _ := path.Match(pat, name); ok {
				return m
			}
		}
	}
	return nil
}

// checkBaseURL accepts an absolute http or https URL with a host and no
// query, fragment or credentials.
func checkBaseURL(raw string) error {
	u, err := url.Parse(raw)
	switch {
	case err != nil:
		return err
	case u.Scheme != "http" && u.Scheme != "https":
		return errors.New("want an http or https URL")
	case u.Host == "":
		return errors.New("no host")
	case u.RawQuery != "" || u.Fragment != "":
		return errors.New("no query or fragment allowed")
	case u.User != nil:
		return errors.New("no credentials allowed in the URL")
	}
	return nil
}

func (c *Config) validateContext(p *problems, x *Context) {
	c.validateSummarize(p, x)
	if x.Model != "" && c.Model(x.Model) == nil {
		p.errorf(x.Source, "model", "Unknown model", "Context %q names model %q, which is not declared.", x.Name, x.Model)
	}
	if x.Assembler != "" && c.Assembler(x.Assembler) == nil {
		p.errorf(x.Source, "assembler", "Unknown assembler", "Context %q names assembler %q, which is not declared.", x.Name, x.Assembler)
	}
	seen := map[string]bool{}
	for _, name := range x.Plugins {
		switch {
		case c.Plugin(name) == nil:
			p.errorf(x.Source, "plugins", "Unknown plugin", "Context %q lists plugin %q, which is not declared.", x.Name, name)
		case seen[name]:
			p.errorf(x.Source, "plugins", "Duplicate plugin", "Context %q lists plugin %q twice.", x.Name, name)
		}
		seen[name] = true
	}
	p.oneOf(x.Source, "mode", "mode", x.Mode, Modes)
	validateStrategy(p, x.Strategy)

	h := x.History
	p.atLeast(h.Source, "preserve_recent", h.PreserveRecent, 0)
	p.oneOf(h.Source, "infer", "infer", h.Infer, InferModes)
	p.priority(h.Source, "priority", h.Priority)
	if h.IsSet("window") {
		p.atLeast(h.Source, "window", h.Window, 0)
	}
	kinds := make([]string, 0, len(h.Kinds))
	for k := range h.Kinds {
		kinds = append(kinds, k)
	}
	sort.Strings(kinds)
	for _, k := range kinds {
		p.oneOf(h.Source, "kinds", "message kind", k, MessageKinds)
		p.oneOf(h.Source, "kinds", "kinds."+k, h.Kinds[k], KindPolicies)
	}
	p.atLeast(x.Strategy.Source, "min_free", x.Strategy.MinFree, 0)

	if fa := x.Facts; fa.Enabled {
		p.atLeast(fa.Source, "max_tokens", fa.MaxTokens, 0)
		if fa.Share <= 0 || fa.Share > 1 {
			p.errorf(fa.Source, "share", "Invalid facts share", "share is %g; it must be more than 0 and at most 1.", fa.Share)
		}
	}

	validateMemory(p, x.Memory)

	f := x.Fresh
	p.atLeast(f.Source, "system_prompt_tokens", f.SystemPromptTokens, 0)
	p.atLeast(f.Source, "task_spec_tokens", f.TaskSpecTokens, 0)
	p.atLeast(f.Source, "reserved_tokens", f.ReservedTokens, 0)
	p.atLeast(f.Source, "repo_map_tokens", f.RepoMapTokens, 0)
	p.atLeast(f.Source, "codebase_docs_tokens", f.CodebaseDocsTokens, 0)
	sum := 0.0
	for _, name := range f.ShareNames() {
		if f.Shares[name] < 0 {
			p.errorf(f.Source, "shares", "Negative share", "The share of %q is %g; shares must not be negative.", name, f.Shares[name])
		}
		sum += f.Shares[name]
	}
	if sum <= 0 {
		p.errorf(f.Source, "shares", "Shares sum to zero", "At least one component needs a positive share of the dynamic budget.")
	}

	m := x.MultiAgent
	if !h.IsSet("window") {
		p.atLeast(m.Source, "window_size", m.WindowSize, 0)
	}
	p.atLeast(m.Source, "max_bytes", m.MaxBytes, 1)
	p.atLeast(m.Source, "team_task_max_bytes", m.TeamTaskMaxBytes, 1)
	for _, pat := range m.MarkerPatterns {
		if _, err := regexp.Compile(pat); err != nil {
			p.errorf(m.Source, "marker_patterns", "Invalid marker pattern", "%q is not a valid regular expression: %v.", pat, err)
		}
	}
}

// validateStrategy checks the type and 0 < target < warning < critical <= 1.
func validateStrategy(p *problems, s Strategy) {
	p.oneOf(s.Source, "type", "strategy type", s.Type, StrategyTypes)
	p.atLeast(s.Source, "carryover_turns", s.CarryoverTurns, 0)
	if s.Target <= 0 {
		p.errorf(s.Source, "target", "Thresholds out of order", "target must be greater than 0, got %g.", s.Target)
	}
	if s.Target >= s.WarningThreshold {
		p.errorf(s.Source, "target", "Thresholds out of order",
			"target (%g) must be below warning_threshold (%g), so compaction has room before the next warning.", s.Target, s.WarningThreshold)
	}
	if s.WarningThreshold >= s.CriticalThreshold {
		p.errorf(s.Source, "warning_threshold", "Thresholds out of order",
			"warning_threshold (%g) must be below critical_threshold (%g).", s.WarningThreshold, s.CriticalThreshold)
	}
	if s.CriticalThreshold > 1 {
		p.errorf(s.Source, "critical_threshold", "Thresholds out of order",
			"critical_threshold must be at most 1, got %g.", s.CriticalThreshold)
	}
}

func (c *Config) validateAgent(p *problems, a *Agent) {
	if a.Assembler != "" && c.Assembler(a.Assembler) == nil {
		p.errorf(a.Source, "assembler", "Unknown assembler", "Agent %q names assembler %q, which is not declared.", a.Name, a.Assembler)
	}
	if a.WindowSize != nil {
		p.atLeast(a.Source, "window_size", *a.WindowSize, 0)
	}
	p.oneOf(a.Source, "speaker_type", "speaker type", a.SpeakerType, SpeakerTypes)
	if a.Type == "" {
		p.errorf(a.Source, "type", "Missing agent type", "Agent %q needs a type (%s, or any other name for the plain-text format).",
			a.Name, strings.Join(KnownAgentTypes, ", "))
		return
	}
	for _, t := range KnownAgentTypes {
		if a.Type == t {
			return
		}
	}
	p.add(hcl.DiagWarning, a.Range("type"), "Unknown agent type",
		"Agent %q has type %q, which is not one of %s; it will use the plain-text format.", a.Name, a.Type, strings.Join(KnownAgentTypes, ", "))
}

func (c *Config) validateServer(p *problems) {
	s := c.Server
	if _, port, err := net.SplitHostPort(s.Listen); err != nil || port == "" {
		p.errorf(s.Source, "listen", "Invalid listen address", "listen is %q; want HOST:PORT, such as 127.0.0.1:7400.", s.Listen)
	}
	if (s.TLSCert == "") != (s.TLSKey == "") {
		p.errorf(s.Source, "tls_cert", "Incomplete TLS settings", "Set both tls_cert and tls_key, or neither.")
	}
	p.atLeast(s.Source, "max_request_bytes", s.MaxRequestBytes, 1024)
	p.atLeast(s.Source, "max_append_messages", s.MaxAppendMessages, 1)
	p.atLeast(s.Source, "max_append_bytes", s.MaxAppendBytes, 1024)
	p.atLeast(s.Source, "compress_min_bytes", s.CompressMinBytes, 0)
	if s.MemoryLimit != 0 && s.MemoryLimit < 32<<20 {
		p.errorf(s.Source, "memory_limit", "Invalid memory_limit", "memory_limit must be 0 (none) or at least %d bytes (32 MiB), got %d.", 32<<20, s.MemoryLimit)
	}
	if s.TraceProtocol != "http/protobuf" && s.TraceProtocol != "grpc" {
		p.errorf(s.Source, "trace_protocol", "Invalid trace_protocol", "trace_protocol is %q; want \"http/protobuf\" or \"grpc\".", s.TraceProtocol)
	}
	if s.TraceSampleRatio <= 0 || s.TraceSampleRatio > 1 {
		p.errorf(s.Source, "trace_sample_ratio", "Invalid trace_sample_ratio", "trace_sample_ratio must be over 0 and at most 1, got %g.", s.TraceSampleRatio)
	}
	if e := s.TraceEndpoint; e != "" {
		if u, err := url.Parse(e); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			p.errorf(s.Source, "trace_endpoint", "Invalid trace_endpoint", "trace_endpoint is %q; want the collector's URL, http://HOST:4318 (or https://), http://HOST:4317 with trace_protocol = \"grpc\".", e)
		}
	}
}

// memoryNamePattern is what an agent or group name may hold; memoryLabel
// a block's label.
var (
	memoryNamePattern  = regexp.MustCompile(`^[A-Za-z0-9._:-]{1,128}$`)
	memoryLabelPattern = regexp.MustCompile(`^[A-Za-z][A-Za-z0-9_.-]{0,63}$`)
)

// maxMemoryLimit bounds a block's limit.
const maxMemoryLimit = 1_000_000

func validateMemory(p *problems, m Memory) {
	if m.Agent != "" && !memoryNamePattern.MatchString(m.Agent) {
		p.errorf(m.Source, "agent", "Invalid agent name", "agent %q must be 1..128 bytes of [A-Za-z0-9._:-].", m.Agent)
	}
	for _, g := range m.Groups {
		if !memoryNamePattern.MatchString(g) {
			p.errorf(m.Source, "groups", "Invalid group name", "group %q must be 1..128 bytes of [A-Za-z0-9._:-].", g)
		}
	}
	seen := map[string]hcl.Range{}
	for _, b := range m.Blocks {
		if !memoryLabelPattern.MatchString(b.Label) {
			p.errorf(b.Source, "", "Invalid block label", "block %q: a label is 1..64 bytes of [A-Za-z0-9_.-] starting with a letter.", b.Label)
		}
		p.oneOf(b.Source, "scope", "scope", b.Scope, MemoryScopes)
		p.oneOf(b.Source, "unit", "unit", b.Unit, []string{"chars", "tokens"})
		switch {
		case b.Scope == "group" && !memoryNamePattern.MatchString(b.Group):
			p.errorf(b.Source, "group", "Missing or invalid group", "block %q has scope = \"group\": name its group (1..128 bytes of [A-Za-z0-9._:-]) with group = \"NAME\".", b.Label)
		case b.Scope != "group" && b.Group != "":
			p.errorf(b.Source, "group", "group without scope = \"group\"", "block %q names group %q but its scope is %q.", b.Label, b.Group, b.Scope)
		}
		if b.Limit < 1 || b.Limit > maxMemoryLimit {
			p.errorf(b.Source, "limit", "Invalid limit", "limit is %d; it must be 1..%d.", b.Limit, maxMemoryLimit)
		}
		if n := utf8.RuneCountInString(b.Value); b.Unit == "chars" && n > b.Limit {
			p.errorf(b.Source, "value", "Value over its limit", "block %q: the value holds %d characters, over its limit of %d chars.", b.Label, n, b.Limit)
		}
		key := b.Scope + ":" + b.Group + "/" + b.Label
		if first, ok := seen[key]; ok {
			p.errorf(b.Source, "", "Duplicate memory block", "block %q of scope %s is declared twice; the first is at %s.", b.Label, b.Scope, first)
		}
		seen[key] = b.DeclRange
	}
}
