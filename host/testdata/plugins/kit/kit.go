// Package kit holds the plugin types of the host's process tests and
// benchmarks, so the same code runs as a process (the binaries beside it)
// and in-process (sdk.NewLocalPlugin, sdk.NewLocalAssembler).
package kit

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/ctxhost/ctxhost/sdk"
)

// EnvDir names a directory the probe watches: when DIR/block exists at a
// Component call (DIR/compact-block at a Compact call), the probe removes
// it, creates DIR/entered and hangs, so a test can kill it in the middle
// of the call or see the host cut it off.
const EnvDir = "CTXHOST_PROBE_DIR"

// Garbage modes (op "garbage", {"mode": ...}); the mode is not part of the
// state, so a restarted probe behaves again.
const (
	GarbageUTF8     = "utf8"     // Component text is not valid UTF-8
	GarbageGrow     = "grow"     // Compact doubles the text
	GarbageNegative = "negative" // Compact halves the text, claims -5 freed
)

// Probe is a compactable text plugin whose component is named after its
// configured name (default "probe"). Ops: set {text}, garbage {mode},
// exit {} (the process exits 50 ms after answering).
type Probe struct {
	// Sleep delays every Component call, ignoring the context.
	Sleep time.Duration

	mu   sync.Mutex
	name string
}

type probeConfig struct {
	Name string `json:"name"`
}

// Describe implements sdk.Plugin.
func (p *Probe) Describe() sdk.PluginInfo {
	return sdk.PluginInfo{Name: "probe", Version: "1", Priority: 5, Compactable: true, Ops: []sdk.OpInfo{
		{Name: "set", Description: "set the text: {text}"},
		{Name: "garbage", Description: "answer nonsense: {mode}"},
		{Name: "exit", Description: "exit the process right after answering"},
	}}
}

// Configure implements sdk.Configurer: {"name": component name}.
func (p *Probe) Configure(raw json.RawMessage) error {
	var c probeConfig
	if err := json.Unmarshal(raw, &c); err != nil {
		return sdk.InvalidArgs("%v", err)
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.name = c.Name
	return nil
}

func (p *Probe) componentName() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.name == "" {
		return "probe"
	}
	return p.name
}

// NewSession implements sdk.Plugin.
func (p *Probe) NewSession(string) sdk.Session { return &probeSession{plugin: p} }

type probeSession struct {
	plugin  *Probe
	text    string
	garbage string
}

func (s *probeSession) Component(context.Context, string) (*sdk.Component, error) {
	if err := hangIfAsked("block"); err != nil {
		return nil, err
	}
	time.Sleep(s.plugin.Sleep)
	if s.text == "" {
		return nil, nil
	}
	c := &sdk.Component{Name: s.plugin.componentName(), Slot: sdk.SlotContext, Priority: 5, Compactable: true, Text: s.text}
	if s.garbage == GarbageUTF8 {
		c.Text += "\xff\xfe"
	}
	return c, nil
}

// hangIfAsked hangs (until the process is killed) once per file named
// block.
func hangIfAsked(block string) error {
	dir := os.Getenv(EnvDir)
	if dir == "" {
		return nil
	}
	if err := os.Remove(filepath.Join(dir, block)); err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return nil
		}
		return err
	}
	if err := os.WriteFile(filepath.Join(dir, "entered"), nil, 0o644); err != nil {
		return err
	}
	time.Sleep(time.Minute)
	return errors.New("probe was not killed")
}

type probeArgs struct {
	Text string `json:"text"`
	Mode string `json:"mode"`
}

func (s *probeSession) Apply(_ context.Context, op string, raw json.RawMessage) (json.RawMessage, error) {
	var a probeArgs
	if len(raw) > 0 {
		if err := json.Unmarshal(raw, &a); err != nil {
			return nil, sdk.InvalidArgs("%v", err)
		}
	}
	switch op {
	case "set":
		s.text = a.Text
	case "garbage":
		s.garbage = a.Mode
	case "exit":
		time.AfterFunc(50*time.Millisecond, func() { os.Exit(3) })
	default:
		return nil, sdk.UnknownOp(op)
	}
	return json.RawMessage(`{}`), nil
}

func (s *probeSession) Compact(_ context.Context, req sdk.CompactRequest) (sdk.CompactResult, error) {
	if err := hangIfAsked("compact-block"); err != nil {
		return sdk.CompactResult{}, err
	}
	before := tokens(s.text, req.Encoding)
	switch s.garbage {
	case GarbageGrow:
		s.text += s.text
		return sdk.CompactResult{ClaimedFreed: before, Log: "grew"}, nil
	case GarbageNegative:
		s.text = s.text[:len(s.text)/2]
		return sdk.CompactResult{ClaimedFreed: -5, Log: "negative"}, nil
	}
	s.text = s.text[:len(s.text)/2]
	return sdk.CompactResult{ClaimedFreed: before - tokens(s.text, req.Encoding), Log: "halved"}, nil
}

// tokens counts text with the host's encoding (0 if it is unknown).
func tokens(text, encoding string) int {
	n, _ := sdk.CountTokens(encoding, text)
	return n
}

func (s *probeSession) State() ([]byte, error) { return []byte(s.text), nil }

func (s *probeSession) Restore(b []byte) error {
	s.text = string(b)
	return nil
}

// Joiner is an assembler whose text payload is every component's text and
// messages, one per line.
type Joiner struct{}

// Describe implements sdk.Assembler.
func (Joiner) Describe() sdk.AssemblerInfo {
	return sdk.AssemblerInfo{Name: "joiner", Version: "1", Formats: []sdk.FormatInfo{{Name: "text", MediaType: "text/plain"}}}
}

// Assemble implements sdk.Assembler.
func (Joiner) Assemble(_ context.Context, req sdk.AssembleRequest) (sdk.AssembleResult, error) {
	var b strings.Builder
	for _, c := range req.Components {
		b.WriteString(c.Text)
		for _, m := range c.Messages {
			b.WriteString(m.Role + ": " + m.Content + "\n")
		}
	}
	return sdk.AssembleResult{Payload: []byte(b.String()), MediaType: "text/plain"}, nil
}

// ReadsRequestOnly implements sdk.RequestReader: Assemble only reads.
func (Joiner) ReadsRequestOnly() {}
