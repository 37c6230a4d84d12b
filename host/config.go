package host

import (
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/ctxhost/ctxhost/host/history"
	"github.com/ctxhost/ctxhost/sdk"
	"github.com/ctxhost/ctxhost/tokenizer"
)

// Defaults applied by Config.WithDefaults.
const (
	DefaultWindow          = 128000
	DefaultReserved        = 4000 // reserved for the response: room for a long answer
	DefaultEncoding        = tokenizer.CL100kBase
	DefaultWarning         = 0.7
	DefaultCritical        = 0.9
	DefaultStrategy        = StrategyProactive
	DefaultTarget          = 0.6 // proactive hysteresis target
	DefaultCarryoverTurns  = 4   // graduated restart: user turns carried over
	DefaultMaskBatch       = 3   // graduated: tool outputs masked per step
	DefaultAdaptiveWindow  = 3   // adaptive: turns of growth remembered
	DefaultHistoryPriority = 6   // the history's compaction priority: after plugins' bulky context
	DefaultPluginTimeout   = 10 * time.Second
	DefaultMinFreeShare    = 0.05 // proactive: least share of the budget a compaction frees
)

// Config configures one session (a profile).
type Config struct {
	Window     int        // model context window in tokens
	Reserved   int        // tokens reserved for the response
	Encoding   string     // tokenizer encoding (see tokenizer.Get)
	Thresholds Thresholds // warning / critical utilization
	Strategy   StrategyConfig
	History    HistoryConfig
	Plugins    []PluginBinding
	Assembler  Assembler // nil: Prepare returns components without a payload
	Format     string    // assembler format
	// AssemblerOptions are passed to the assembler unchanged.
	AssemblerOptions map[string]string
	// AssemblerTimeout bounds one Assemble call (default DefaultPluginTimeout).
	AssemblerTimeout time.Duration
	// ReusePayload declares that the caller is done with each Prepared
	// payload before it prepares the same agent again (it writes each
	// turn out, or copies what it keeps): the next payload may then be
	// built in the same memory, so a long payload that grew by a few
	// messages is not copied (sdk.AssembleRequest.ReusePayload). Without
	// it a payload never changes once returned.
	ReusePayload bool
	// FailOnUnmetTarget makes Prepare fail (instead of warning) when the
	// compaction target cannot be met.
	FailOnUnmetTarget bool
	// AllowOverWindow lets Prepare return a context larger than the window
	// minus the reserve (with a warning) instead of failing with an
	// *OverWindowError. Off by default: a provider rejects such a payload.
	AllowOverWindow bool
	// RecallTool adds the ready-made recall tool (sdk.RecallTool) to the
	// request's tools, so the model can read back what compaction hid.
	RecallTool bool
	// OwnTools are further tools ctxhost answers itself (the memory
	// tools), added to every request after the caller's, as RecallTool.
	OwnTools []sdk.ToolDefinition
	// Pricing overrides the provider's prompt-caching price model (nil:
	// the assembler's default for Format); Prepare reports each turn's
	// cost with it (Prepared.Cache).
	Pricing *sdk.Pricing
	// Counter, when set, counts tokens instead of Encoding's tokenizer
	// (Encoding still names the encoding to plugins).
	Counter tokenizer.Counter
	// Fit, when set, fits every turn to a fixed budget per component
	// instead of the strategy and the compaction pipeline (FitPolicy).
	Fit FitPolicy
	// Viewer, when set, makes the session multi-agent: a Prepare for a
	// named agent assembles that agent's view (AgentView) of the session's
	// messages instead of the session's own texts and history.
	Viewer Viewer
	// Framing overrides how the provider frames messages (nil: the
	// framing the assembler declares for Format, if any; see sdk.Framing).
	Framing *sdk.Framing
	// Facts keeps what compacted messages stated in view (see
	// FactsConfig); off unless Enabled.
	Facts FactsConfig
	// Summary turns the summarize step on (a Summarizer) and tunes it.
	Summary SummaryConfig
}

// format is what the assembler declares of the session's format (the
// first when none is named); false without an assembler or such a format.
func (c Config) format() (sdk.FormatInfo, bool) {
	if c.Assembler == nil {
		return sdk.FormatInfo{}, false
	}
	return c.Assembler.Info().Format(c.Format)
}

// rendersText reports whether the payload is a plain-text prompt the
// model reads as it is: a text/* format without a provider framing.
func (c Config) rendersText() bool {
	f, ok := c.format()
	return ok && c.framing() == nil && strings.HasPrefix(f.MediaType, "text/")
}

// framing is the provider framing the session counts with: the explicit
// one, else the one the assembler declares for the format, else nil
// (messages counted as their text).
func (c Config) framing() *sdk.Framing {
	if f, ok := c.format(); ok && c.Framing == nil {
		return f.Framing
	}
	return c.Framing
}

// pricing is the price model the session reports with: the explicit one,
// else the assembler's default for the format, else nil (no report).
func (c Config) pricing() *sdk.Pricing {
	if f, ok := c.format(); ok && c.Pricing == nil {
		return f.Pricing
	}
	return c.Pricing
}

// Thresholds are utilization fractions of the available budget.
type Thresholds struct {
	Warning  float64 // default 0.7
	Critical float64 // default 0.9
}

// StrategyConfig selects and tunes the compaction strategy.
type StrategyConfig struct {
	Name           string  // lazy, proactive, adaptive or graduated
	Target         float64 // proactive (and forced) compaction target, default 0.6
	CarryoverTurns int     // graduated: user turns carried over on restart, default 4
	MaskBatch      int     // graduated: tool outputs masked per Mask turn, default 3
	AdaptiveWindow int     // adaptive: recent turns used to predict growth, default 3
	// MinFree is the least a proactive compaction must be able to free,
	// in tokens (default 5% of the available budget): when what must be
	// kept is above the target, the strategy compacts once down to that
	// floor, then only appends until the context has grown by MinFree.
	MinFree int
}

// HistoryConfig configures the built-in conversation history component.
type HistoryConfig struct {
	Options  history.Options
	Priority *int // default 6; 0 makes the history never compacted
}

// PluginBinding attaches a context plugin to a session.
type PluginBinding struct {
	Name        string        // binding name, used by Apply
	Plugin      ContextPlugin // the plugin, in-process or remote
	Priority    *int          // overrides the plugin's declared priority
	Compactable *bool         // overrides the plugin's declared compactable flag
	Required    bool          // a failure fails the call instead of a warning
	Timeout     time.Duration // per call, default DefaultPluginTimeout
	// MaxComponentBytes bounds the component the plugin answers (text,
	// messages and metadata); default DefaultMaxComponentBytes.
	MaxComponentBytes int
	// KeepAtLeast is the plugin's floor: compaction never asks it for
	// more than its component's tokens above this many, and leaves it
	// alone once it is there (0: no floor).
	KeepAtLeast int
}

// DefaultMaxComponentBytes is the default bound of a plugin's component.
const DefaultMaxComponentBytes = 4 << 20

// WithDefaults returns c with zero fields replaced by their defaults.
func (c Config) WithDefaults() Config {
	if c.Window == 0 {
		c.Window = DefaultWindow
	}
	if c.Reserved == 0 && c.Window > DefaultReserved*2 {
		c.Reserved = DefaultReserved
	}
	if c.Encoding == "" {
		c.Encoding = DefaultEncoding
	}
	if c.Thresholds.Warning == 0 {
		c.Thresholds.Warning = DefaultWarning
	}
	if c.Thresholds.Critical == 0 {
		c.Thresholds.Critical = DefaultCritical
	}
	c.Strategy = c.Strategy.withDefaults()
	c.Facts = c.Facts.withDefaults()
	if c.Summary.Summarizer != nil {
		c.Summary = c.Summary.withDefaults()
	}
	if c.History.Priority == nil {
		p := DefaultHistoryPriority
		c.History.Priority = &p
	}
	if c.AssemblerTimeout == 0 {
		c.AssemblerTimeout = DefaultPluginTimeout
	}
	plugins := make([]PluginBinding, len(c.Plugins))
	copy(plugins, c.Plugins)
	for i := range plugins {
		if plugins[i].Timeout == 0 {
			plugins[i].Timeout = DefaultPluginTimeout
		}
		if plugins[i].MaxComponentBytes <= 0 {
			plugins[i].MaxComponentBytes = DefaultMaxComponentBytes
		}
	}
	c.Plugins = plugins
	return c
}

func (s StrategyConfig) withDefaults() StrategyConfig {
	if s.Name == "" {
		s.Name = DefaultStrategy
	}
	if s.Target == 0 {
		s.Target = DefaultTarget
	}
	if s.CarryoverTurns == 0 {
		s.CarryoverTurns = DefaultCarryoverTurns
	}
	if s.MaskBatch == 0 {
		s.MaskBatch = DefaultMaskBatch
	}
	if s.AdaptiveWindow == 0 {
		s.AdaptiveWindow = DefaultAdaptiveWindow
	}
	return s
}

// Validate reports every problem of c (after defaults) at once.
func (c Config) Validate() error {
	var errs []error
	bad := func(format string, a ...any) { errs = append(errs, fmt.Errorf(format, a...)) }
	if c.Window <= 0 {
		bad("window must be positive, got %d", c.Window)
	}
	if c.Reserved < 0 || c.Reserved >= c.Window {
		bad("reserved (%d) must be at least 0 and less than the window (%d)", c.Reserved, c.Window)
	}
	if c.Counter == nil {
		if _, err := tokenizer.Get(c.Encoding); err != nil {
			bad("encoding: %w", err)
		}
	}
	t := c.Thresholds
	if !(t.Warning > 0 && t.Warning < t.Critical && t.Critical <= 1) {
		bad("thresholds must satisfy 0 < warning (%g) < critical (%g) <= 1", t.Warning, t.Critical)
	}
	if err := c.Strategy.validate(); err != nil {
		errs = append(errs, err)
	}
	if c.Strategy.MinFree < 0 {
		bad("strategy min_free must be at least 0, got %d", c.Strategy.MinFree)
	}
	if err := c.History.Options.Policy.Check(); err != nil {
		errs = append(errs, err)
	}
	if p := c.History.Priority; p != nil && (*p < 0 || *p > 100) {
		bad("history priority must be 0..100, got %d", *p)
	}
	errs = append(errs, validateBindings(c.Plugins)...)
	if err := c.Summary.validate(); err != nil {
		errs = append(errs, err)
	}
	if c.Assembler == nil && c.Format != "" {
		bad("format %q set without an assembler", c.Format)
	}
	return errors.Join(errs...)
}

// validateBindings reports every problem of the plugin bindings: each
// named once, bound to a plugin, its priority 0..100, its timeout not
// negative.
func validateBindings(bindings []PluginBinding) []error {
	var errs []error
	bad := func(format string, a ...any) { errs = append(errs, fmt.Errorf(format, a...)) }
	seen := map[string]bool{}
	for i, b := range bindings {
		switch {
		case b.Name == "":
			bad("plugin %d: name is empty", i)
		case seen[b.Name]:
			bad("plugin %q: bound twice", b.Name)
		}
		seen[b.Name] = true
		if b.Plugin == nil {
			bad("plugin %q: no plugin", b.Name)
		}
		if b.Priority != nil && (*b.Priority < 0 || *b.Priority > 100) {
			bad("plugin %q: priority must be 0..100, got %d", b.Name, *b.Priority)
		}
		if b.Timeout < 0 {
			bad("plugin %q: timeout must not be negative", b.Name)
		}
	}
	return errs
}

func (s StrategyConfig) validate() error {
	if _, err := newStrategy(s); err != nil {
		return err
	}
	var errs []error
	if !(s.Target > 0 && s.Target <= 1) {
		errs = append(errs, fmt.Errorf("strategy target must be in (0, 1], got %g", s.Target))
	}
	if s.CarryoverTurns < 0 || s.MaskBatch < 0 || s.AdaptiveWindow < 0 {
		errs = append(errs, fmt.Errorf("strategy carryover_turns, mask_batch and adaptive_window must not be negative"))
	}
	return errors.Join(errs...)
}

// PluginNames lists the plugin bindings' names in binding order.
func (c Config) PluginNames() []string {
	names := make([]string, len(c.Plugins))
	for i, b := range c.Plugins {
		names[i] = b.Name
	}
	return names
}
