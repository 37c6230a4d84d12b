package config

import (
	"sort"
	"time"

	"github.com/hashicorp/hcl/v2"
)

// Source records where a block was declared and where each of its
// attributes was set, so later stages (the host, the ctxhost command) can
// point their own diagnostics into the HCL.
type Source struct {
	// DeclRange is the range of the block header (type and labels).
	DeclRange hcl.Range
	// AttrRanges maps an attribute name to the range of its value
	// expression; attributes left at their default are absent.
	AttrRanges map[string]hcl.Range
	// invalid marks attributes that failed to decode or are missing though
	// required; validation skips them so one mistake is reported once.
	invalid map[string]bool
}

// Range returns the range of attribute attr's value, or DeclRange when the
// attribute was not set.
func (s Source) Range(attr string) hcl.Range {
	if r, ok := s.AttrRanges[attr]; ok {
		return r
	}
	return s.DeclRange
}

// IsSet reports whether attribute attr was written in the HCL.
func (s Source) IsSet(attr string) bool {
	_, ok := s.AttrRanges[attr]
	return ok
}

// Config is a loaded, validated configuration. Blocks appear in declaration
// order (files in the order given, a directory's files sorted by name).
type Config struct {
	// Files holds every parsed file by name, for FormatDiagnostics.
	Files      map[string]*hcl.File
	Variables  []*Variable
	Models     []*Model
	Plugins    []*Plugin
	Assemblers []*Assembler
	Contexts   []*Context
	Agents     []*Agent
	Host       Host
	Server     Server
	Upstreams  []*Upstream
	// Summarizers are the summarizer blocks: models that condense the
	// history spans a context's summarize block asks for.
	Summarizers []*Summarizer
}

// SummarizerKinds are the provider APIs a summarizer block may call.
var SummarizerKinds = []string{"openai", "anthropic", "gemini"}

// Summarizer is a `summarizer "NAME"` block: a model that condenses spans
// of history (see Summarize).
type Summarizer struct {
	Source
	Name string
	// Kind is the provider API: openai, anthropic or gemini.
	Kind string
	// BaseURL is where the API paths are appended.
	BaseURL string
	// Model is the model the calls name.
	Model string
	// Prompt is the instruction ("": the built-in one).
	Prompt string
	// MaxTokens bounds a summary (default DefaultSummaryMaxTokens).
	MaxTokens int
	// Timeout bounds one call (default DefaultSummaryTimeout).
	Timeout time.Duration
	// APIKeyEnv names the environment variable with the key ("": none).
	APIKeyEnv string
	// CallerKey: in the call path, a summary triggered by a call takes
	// that call's key (held in memory only) before APIKeyEnv's.
	CallerKey bool
	// Concurrency bounds the calls in flight across sessions (default 2).
	Concurrency int
	// InputPrice and OutputPrice price a call's tokens in units of the
	// context's uncached input token (defaults 1 and 4).
	InputPrice, OutputPrice float64
}

// Summarizer returns the summarizer named name, or nil.
func (c *Config) Summarizer(name string) *Summarizer {
	return find(c.Summarizers, name, func(s *Summarizer) string { return s.Name })
}

// SummaryWaits are the values of a summarize block's wait attribute.
var SummaryWaits = []string{"never", "critical"}

// Summarize is a context's `summarize` block: the history span the window
// would omit next is summarized ahead of need by a summarizer block's
// model or a plugin with the summarize capability, and shown in its place.
type Summarize struct {
	Source
	Enabled bool // the block is present
	// Summarizer names a summarizer block; Plugin a plugin block (one of
	// the two).
	Summarizer string
	Plugin     string
	// MaxTokens bounds a summary (default: the summarizer block's, else
	// DefaultSummaryMaxTokens).
	MaxTokens int
	// Wait is "never" (default) or "critical": a turn that must compact
	// waits for the summary, at most WaitTimeout.
	Wait        string
	WaitTimeout time.Duration
	// ToolOutputTokens, when set, has a single tool output of at least
	// this many tokens summarized ahead too: masked, it is shown as its
	// summary (0: outputs are masked by their placeholders only).
	ToolOutputTokens int
}

// Variable is a `variable "NAME"` block and its resolved value.
type Variable struct {
	Source
	Name        string
	Description string
	// Value is the resolved value as text (numbers and bools formatted as
	// HCL would print them; complex values as JSON).
	Value string
}

// Model is a `model "NAME"` block.
type Model struct {
	Source
	Name                string
	ContextWindow       int
	ReservedForResponse int    // default 4096
	Encoding            string // cl100k_base (default), o200k_base or approximate
	// Match are glob patterns (path.Match syntax: *, ?, [a-z]) on the
	// model a provider call names: `ctxhost serve` bounds such a call by
	// this model's window and reserve instead of its profile's model.
	Match []string
	// Pricing overrides the assembler's default prompt-caching price
	// model; nil when the model has no pricing block.
	Pricing *Pricing
}

// Pricing is a model's `pricing` block: prompt-caching prices in units of
// one uncached input token. Attributes left out keep the assembler's
// default for the provider.
type Pricing struct {
	Source
	Input        float64
	CacheRead    float64
	CacheWrite   float64
	MinCacheable int
	Granularity  int
}

// Plugin is a `plugin "NAME"` block.
type Plugin struct {
	Source
	Name string
	// Path is the plugin binary; a relative path is resolved against the
	// directory of the file that declares the block. Empty for a built-in
	// plugin.
	Path string
	// Builtin names a first-party plugin run inside ctxhost itself (one of
	// BuiltinPlugins) instead of a process at Path.
	Builtin string
	// SHA256 is the expected lowercase hex digest of the binary, or "".
	SHA256 string
	// Priority overrides the plugin's declared priority when not nil.
	Priority *int
	// Compactable overrides the plugin's declared flag when not nil.
	Compactable *bool
	// Required makes a failure of this plugin fail the prepare.
	Required bool
	// Timeout is the deadline of every call to the plugin (default 2s).
	Timeout time.Duration
	// RestoreTimeout bounds one relaunch after a crash: start, configure
	// and the restore of every session's state (default 60s).
	RestoreTimeout time.Duration
	// MaxComponentBytes bounds the component the plugin answers (0: the
	// host's default, host.DefaultMaxComponentBytes).
	MaxComponentBytes int
	// AutoMTLS is go-plugin's automatic mutual TLS between host and
	// plugin (default true); false for a plugin whose SDK has no TLS (the
	// Python SDK), which then serves on a private unix socket.
	AutoMTLS bool
	// Env are environment variables set for the plugin process, over the
	// host's own.
	Env map[string]string
	// KeepAtLeast is the plugin's floor in tokens: compaction never asks
	// it to go below (0: none).
	KeepAtLeast int
	// Config is the raw `config { ... }` body (an empty body when absent),
	// decoded with DecodePluginConfig once the plugin's schema is known.
	Config hcl.Body
	// EvalContext is the evaluation context of the declaring file
	// (variables and functions), to pass to DecodePluginConfig.
	EvalContext *hcl.EvalContext
}

// BuiltinPlugins are the first-party context plugins a plugin block can
// run inside ctxhost with `builtin = "NAME"`.
var BuiltinPlugins = []string{"memory", "plan", "tooloutput"}

// BuiltinAssemblers are the first-party assemblers an assembler block can
// run inside ctxhost with `builtin = "NAME"`.
var BuiltinAssemblers = []string{"claude", "codex", "gemini"}

// Assembler is an `assembler "NAME"` block.
type Assembler struct {
	Source
	Name string
	Path string // resolved like Plugin.Path; empty for a built-in one
	// Builtin names a first-party assembler run inside ctxhost itself
	// (one of BuiltinAssemblers) instead of a process at Path: no process
	// round trip per turn, nothing to relaunch.
	Builtin string
	SHA256  string
	Format  string            // empty: the assembler's first declared format (checked at start-up)
	Options map[string]string // free-form, passed to every Assemble call
	Timeout time.Duration     // default 2s
	// AutoMTLS: see Plugin.AutoMTLS.
	AutoMTLS bool
	// Env: see Plugin.Env.
	Env map[string]string
}

// Strategy is a context's `strategy` block.
type Strategy struct {
	Source
	Type              string  // lazy, proactive (default; lazy for a profile an upstream serves), adaptive, graduated or cache
	WarningThreshold  float64 // default 0.7
	CriticalThreshold float64 // default 0.9
	Target            float64 // default 0.6
	CarryoverTurns    int     // default 4 (graduated restart)
	MinFree           int     // proactive: least tokens a compaction frees; 0: 5% of the budget
}

// InferModes are the values of a history block's infer attribute.
var InferModes = []string{"auto", "off", "chat", "agent"}

// History is a context's `history` block.
type History struct {
	Source
	PreserveRecent int  // turns; default 5
	KeepFirst      bool // default true
	// Infer is how the kinds of unlabelled messages are inferred: "auto"
	// (default: read from the conversation's shape), "off", "chat" or
	// "agent".
	Infer string
	// RecallTool adds the ready-made recall tool to every request.
	RecallTool bool
	// Window is the number of messages before the current one an agent sees
	// in a multi-agent view (default 5); the same value as
	// MultiAgent.WindowSize, which may be set in either block.
	Window   int
	Priority int // default 6
	// Kinds sets what compaction may do with each message kind: "mask",
	// "pin", "drop_first" or "omit" (the sliding window only). Kinds left
	// out keep their defaults (observation mask, demonstration
	// drop_first, task pin, the others omit).
	Kinds map[string]string
}

// Facts is a context's `facts` block: what compacted messages stated
// (ids, codes, names, amounts, dates, paths, URLs, e-mail addresses, a
// JSON output's keys and ids) stays in view. A masked output's
// placeholder ends with a digest of its facts, and a component holds
// those of omitted, cut and masked messages that nothing shown states.
// The block turns it on; without it, it is off.
type Facts struct {
	Source
	Enabled bool // default true when the block is present
	// MaxTokens bounds the facts component (default 400; 0: no
	// component, the placeholders' digests alone).
	MaxTokens int
	// Share bounds the component to this share of the available budget
	// (default 0.05).
	Share float64
}

// Kind policies of the history `kinds` attribute.
const (
	KindMask      = "mask"
	KindPin       = "pin"
	KindDropFirst = "drop_first"
	KindOmit      = "omit"
)

// KindPolicies lists the values of the history `kinds` attribute.
var KindPolicies = []string{KindMask, KindPin, KindDropFirst, KindOmit}

// Fresh is a context's `fresh` block: the token budgeter of fresh task
// contexts.
type Fresh struct {
	Source
	SystemPromptTokens int // default 2000
	TaskSpecTokens     int // default 1000
	ReservedTokens     int // default 16000
	// Shares splits the dynamic allocation across components; the values
	// are relative weights (normalised by their sum). Default
	// tool_outputs 0.60, plan 0.25, memory 0.15.
	Shares map[string]float64
	// RepoMapTokens and CodebaseDocsTokens are the fixed allocations of
	// the repository map and the codebase docs (default 2000 and 3000),
	// counted when the context has that part: a plugin in the role, or a
	// Root for the fallback.
	RepoMapTokens      int
	CodebaseDocsTokens int
	// RepoMapPlugin, CodeSearchPlugin and CodebaseDocsPlugin name the
	// plugins in those roles (default repo_map, code_search and
	// codebase_docs: a role whose plugin the context does not use is
	// empty).
	RepoMapPlugin       string
	CodeSearchPlugin    string
	CodebaseDocsPlugin  string
	RelevantFilesPlugin string // default relevant_files
	// Root is the repository, for the fallbacks of a missing repository
	// map (its structure) and missing docs (its README); relative to the
	// file that declares it. Empty: no fallbacks.
	Root string
}

// ShareNames returns the names in Shares, sorted.
func (f Fresh) ShareNames() []string {
	names := make([]string, 0, len(f.Shares))
	for n := range f.Shares {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// MultiAgent is a context's `multi_agent` block: the agents' shared
// conversation and how each agent's view of it is cut.
type MultiAgent struct {
	Source
	WindowSize       int      // default 5
	MaxBytes         int      // default 786432 (768 KiB)
	TeamTaskMaxBytes int      // default 5120
	MarkerPatterns   []string // default [`\[NEXT:[^\]]+\]`]; valid Go regexps
	Dedup            bool     // default true
}

// Context modes.
const (
	ModeConversation = "conversation"
	ModeFresh        = "fresh"
)

// Context is a `context "NAME"` profile.
type Context struct {
	Source
	Name         string
	Model        string
	Strategy     Strategy
	History      History
	Facts        Facts
	SystemPrompt string
	Instructions string
	// Plugins names the plugins this context uses, in order; when the
	// attribute is absent it holds every configured plugin.
	Plugins           []string
	Assembler         string // optional
	Mode              string // conversation (default) or fresh
	FailOnUnmetTarget bool
	// AllowOverWindow sends a context over the window with a warning
	// instead of failing the turn (default false).
	AllowOverWindow bool
	Fresh           Fresh
	MultiAgent      MultiAgent
	Memory          Memory
	Summarize       Summarize
}

// Memory is a context's `memory` block: which agent and groups its
// sessions belong to, and the memory blocks written for them when absent.
type Memory struct {
	Source
	// Agent names the agent scope of the profile's sessions (default:
	// the profile's name).
	Agent string
	// Groups are the groups every session of the profile belongs to.
	Groups []string
	// Tools adds the memory tools (view, append, replace), which ctxhost
	// answers itself, to every request of the profile's sessions.
	Tools bool
	// Blocks are the `block "LABEL"` blocks, in order.
	Blocks []*MemoryBlock
}

// Memory block scopes a `block` may name.
var MemoryScopes = []string{"session", "agent", "group"}

// MemoryBlock is one `block "LABEL"` of a memory block: a block written
// (when absent) in its scope: each new session's, the profile's agent, or
// the group it names.
type MemoryBlock struct {
	Source
	Label       string
	Scope       string // session (default), agent or group
	Group       string // the group, for scope = "group"
	Description string
	Value       string
	Limit       int    // default 5000
	Unit        string // chars (default) or tokens
	ReadOnly    bool
}

// Well-known agent types; any other type uses the plain-text fallback.
const (
	AgentClaudeCode   = "claude-code"
	AgentOpenAICodex  = "openai-codex"
	AgentGoogleGemini = "google-gemini"
)

// Agent is an `agent "NAME"` block.
type Agent struct {
	Source
	Name              string
	Type              string
	Assembler         string
	Format            string
	SystemInstruction string
	// InstructionFile is the resolved path of instruction_file, and
	// Instruction its content, read at load time.
	InstructionFile string
	Instruction     string
	// WindowSize overrides the context's window when not nil.
	WindowSize  *int
	SpeakerType string // ai (default) or human
}

// Host is the `host` block.
type Host struct {
	Source
	LogLevel  string // trace, debug, info (default), warn, error
	LogFormat string // text (default) or json
	Store     string // optional directory for session state
	// CheckpointsKeepLast and CheckpointsMaxAge are the retention of a
	// session's checkpoints (every acknowledged turn is one): the last
	// keep_last of each session (default DefaultCheckpointsKeepLast;
	// 0: any number) younger than max_age (0, the default: any age).
	// CheckpointsSweep is how often the background sweep removes the
	// others (default DefaultCheckpointsSweep).
	CheckpointsKeepLast int
	CheckpointsMaxAge   time.Duration
	CheckpointsSweep    time.Duration
}

// Checkpoint retention defaults (see Host).
const (
	DefaultCheckpointsKeepLast = 100
	DefaultCheckpointsSweep    = time.Minute
)

// Server is the `server` block: how `ctxhost serve` listens.
type Server struct {
	Source
	Listen string // host:port (default DefaultListen)
	// TokenFile is the resolved path of the file holding the bearer token
	// every RPC must carry; the token itself is never written in HCL.
	TokenFile string
	// TLSCert and TLSKey are the resolved paths of the TLS certificate and
	// key (both or neither).
	TLSCert string
	TLSKey  string
	// MaxRequestBytes bounds a request body (default DefaultMaxRequestBytes).
	MaxRequestBytes int
	// MaxAppendMessages and MaxAppendBytes bound one AppendMessages call
	// (defaults DefaultMaxAppendMessages, DefaultMaxAppendBytes).
	MaxAppendMessages int
	MaxAppendBytes    int
	// LockWait bounds how long a call waits for the call before it on
	// the same session (default DefaultLockWait).
	LockWait time.Duration
	// AdmissionWait bounds how long a call waits for room in the memory
	// budget (60 % of MemoryLimit, shared by the calls in flight
	// and the sessions held) before it is answered as overloaded, in the
	// provider's shape with Retry-After (default DefaultAdmissionWait).
	AdmissionWait time.Duration
	// SharedStore: several serve processes share the SQLite store, each
	// checking a session's stored version before every call. Without it a
	// serve process holds its SQLite file alone (another serve process on
	// it refuses to start) and checks nothing. A PostgreSQL store is
	// always shared.
	SharedStore bool
	// MemoryLimit is the soft limit of the server's Go heap and runtime,
	// in bytes (default DefaultMemoryLimit; 0: none; the environment
	// variable GOMEMLIMIT, when set, wins). Past it the garbage collector
	// runs sooner, up to half the CPU, instead of letting the heap grow to
	// twice what is live: a turn or op that briefly holds several copies
	// of a large plugin state does not double the process's memory.
	MemoryLimit int
	// CompressMinBytes: responses of at least this many bytes are
	// gzip-compressed for clients that accept it; 0 turns compression off.
	// Unset: off on a loopback listen address, DefaultCompressMinBytes
	// elsewhere (see CompressMin).
	CompressMinBytes int
	// Inspector serves the web inspector under /ui (default true).
	Inspector bool
	// TraceEndpoint, when set, is the OpenTelemetry collector the server's
	// spans are exported to over OTLP (http://HOST:4318 for OTLP/HTTP,
	// http://HOST:4317 with TraceProtocol "grpc"); unset, nothing is
	// traced.
	TraceEndpoint string
	// TraceProtocol is "http/protobuf" (default) or "grpc".
	TraceProtocol string
	// TraceSampleRatio is the share of calls traced, over 0 and at most 1
	// (default 1).
	TraceSampleRatio float64
}

// CompressMin is the response size from which the service compresses:
// compress_min_bytes when set; otherwise 0 (never) when the service only
// listens on loopback, where compressing costs more than sending, and
// DefaultCompressMinBytes elsewhere.
func (s Server) CompressMin(loopback bool) int {
	switch {
	case s.IsSet("compress_min_bytes"):
		return s.CompressMinBytes
	case loopback:
		return 0
	default:
		return DefaultCompressMinBytes
	}
}

// Upstream kinds: the provider API an upstream speaks.
const (
	UpstreamOpenAI    = "openai"
	UpstreamAnthropic = "anthropic"
	UpstreamGemini    = "gemini"
)

// UpstreamKinds lists the upstream kinds.
var UpstreamKinds = []string{UpstreamOpenAI, UpstreamAnthropic, UpstreamGemini}

// DefaultUpstreamTimeout bounds one upstream call when timeout is unset.
const DefaultUpstreamTimeout = 10 * time.Minute

// DefaultMaxAnswerBytes bounds an upstream's answer body, or one event of
// a streamed answer, when max_answer_bytes is unset.
const DefaultMaxAnswerBytes = 64 << 20

// Upstream is an `upstream "NAME"` block: a provider endpoint `ctxhost
// serve` forwards the provider-compatible calls of its kind to, with the
// context managed by a context profile.
type Upstream struct {
	Source
	Name string
	// Kind is the provider API: openai, anthropic or gemini.
	Kind string
	// BaseURL is where the provider's API paths are appended
	// (https://api.openai.com, https://api.anthropic.com,
	// https://generativelanguage.googleapis.com); the calls' own base URL
	// is never used.
	BaseURL string
	// Profile names the context profile of the upstream's sessions; empty
	// means the first context block.
	Profile string
	// Timeout bounds one upstream call, the streamed answer included
	// (default DefaultUpstreamTimeout).
	Timeout time.Duration
	// MaxAnswerBytes bounds a non-streamed answer's body and each event
	// of a streamed answer (default DefaultMaxAnswerBytes).
	MaxAnswerBytes int
	// FallbackModel, when set, is the provider model a call goes to when
	// its pinned content cannot fit the window of the model it names: a
	// model block's match patterns give its window, which must be larger.
	FallbackModel string
	// ToolRounds bounds the rounds of one call in which ctxhost answers
	// its own tools (the recall and memory tools its profile adds) and
	// calls the model again (default DefaultToolRounds; 0: ctxhost's
	// tools are not offered upstream).
	ToolRounds int
}

// DefaultToolRounds is an upstream's ToolRounds when tool_rounds is
// unset; MaxToolRounds is the most it may be.
const (
	DefaultToolRounds = 4
	MaxToolRounds     = 32
)

// Upstream returns the upstream named name, or nil.
func (c *Config) Upstream(name string) *Upstream {
	return find(c.Upstreams, name, func(u *Upstream) string { return u.Name })
}

// Model returns the model named name, or nil.
func (c *Config) Model(name string) *Model {
	return find(c.Models, name, func(m *Model) string { return m.Name })
}

// Plugin returns the plugin named name, or nil.
func (c *Config) Plugin(name string) *Plugin {
	return find(c.Plugins, name, func(p *Plugin) string { return p.Name })
}

// Assembler returns the assembler named name, or nil.
func (c *Config) Assembler(name string) *Assembler {
	return find(c.Assemblers, name, func(a *Assembler) string { return a.Name })
}

// Context returns the context profile named name, or nil.
func (c *Config) Context(name string) *Context {
	return find(c.Contexts, name, func(x *Context) string { return x.Name })
}

// Agent returns the agent named name, or nil.
func (c *Config) Agent(name string) *Agent {
	return find(c.Agents, name, func(a *Agent) string { return a.Name })
}

func find[T any](items []T, name string, nameOf func(T) string) T {
	for _, it := range items {
		if nameOf(it) == name {
			return it
		}
	}
	var zero T
	return zero
}

// RunsFrom names what runs the plugin, for messages: its binary, or
// "built in: NAME".
func (p *Plugin) RunsFrom() string { return runsFrom(p.Path, p.Builtin) }

// RunsFrom names what runs the assembler, for messages: its binary, or
// "built in: NAME".
func (a *Assembler) RunsFrom() string { return runsFrom(a.Path, a.Builtin) }

func runsFrom(path, builtin string) string {
	if builtin != "" {
		return "built in: " + builtin
	}
	return path
}
