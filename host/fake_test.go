package host

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/ctxhost/ctxhost/sdk"
)

// fakePlugin is an in-process ContextPlugin whose sessions hold a list of
// lines; it can be told to misbehave.
type fakePlugin struct {
	info sdk.PluginInfo

	mu       sync.Mutex
	sessions map[string][]string
	config   json.RawMessage
	calls    map[string]int
	// misbehaviour
	dead         bool          // every call fails with ErrPluginDead
	hang         time.Duration // Component sleeps this long, ignoring ctx
	componentErr error
	compactMode  string // "", "grow", "negative", "badutf8", "rename", "error", "nothing"
	badName      string // Component answers with this name
	invalidUTF8  bool   // Component answers invalid UTF-8
	padding      int    // Component's text carries this many more bytes
	preparedErr  error
	// recovery tests
	dieAfterApply bool          // the instance dies right after answering an Apply
	preparedMark  bool          // the Prepared hook appends a line (state changes)
	slowApply     chan struct{} // op "slow" answers at ctx's end, applies when closed
	restoreDelay  time.Duration // Restore sleeps this long
	restoreErr    error
	badResult     bool // Apply answers invalid JSON (after applying)
	aborted       bool
}

func newFake(name string, priority int, compactable bool, caps ...string) *fakePlugin {
	return &fakePlugin{
		info:     sdk.PluginInfo{Name: name, Priority: priority, Compactable: compactable, ProtocolVersion: sdk.ProtocolVersion, Capabilities: caps},
		sessions: map[string][]string{},
		calls:    map[string]int{},
	}
}

func (f *fakePlugin) enter(method string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.calls[method]++
	if f.dead {
		return fmt.Errorf("fake %s: %w", f.info.Name, ErrPluginDead)
	}
	return nil
}

func (f *fakePlugin) count(method string) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.calls[method]
}

func (f *fakePlugin) set(fn func(f *fakePlugin)) {
	f.mu.Lock()
	defer f.mu.Unlock()
	fn(f)
}

func (f *fakePlugin) Info() sdk.PluginInfo { return f.info }

func (f *fakePlugin) Configure(_ context.Context, config json.RawMessage) error {
	if err := f.enter("Configure"); err != nil {
		return err
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	f.config = config
	return nil
}

func (f *fakePlugin) Component(ctx context.Context, session, encoding string) (*sdk.Component, error) {
	if err := f.enter("Component"); err != nil {
		return nil, err
	}
	f.mu.Lock()
	hang, cerr := f.hang, f.componentErr
	f.mu.Unlock()
	if hang > 0 {
		time.Sleep(hang)
	}
	if cerr != nil {
		return nil, cerr
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	lines := f.sessions[session]
	if len(lines) == 0 {
		return nil, nil
	}
	c := &sdk.Component{Name: f.info.Name, Text: strings.Join(lines, "\n")}
	if f.badName != "" {
		c.Name = f.badName
	}
	if f.invalidUTF8 {
		c.Text += "\xff"
	}
	c.Text += strings.Repeat(" ", f.padding)
	return c, nil
}

func (f *fakePlugin) Compact(_ context.Context, session string, req sdk.CompactRequest) (sdk.CompactResult, error) {
	if err := f.enter("Compact"); err != nil {
		return sdk.CompactResult{}, err
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	lines := f.sessions[session]
	switch f.compactMode {
	case "error":
		return sdk.CompactResult{}, fmt.Errorf("fake compaction failed")
	case "grow":
		f.sessions[session] = append(lines, strings.Repeat("more words here ", 50))
		return sdk.CompactResult{ClaimedFreed: req.TokensNeeded, Log: "grew"}, nil
	case "negative":
		return sdk.CompactResult{ClaimedFreed: -5}, nil
	case "badutf8":
		f.sessions[session] = lines[len(lines)/2:]
		return sdk.CompactResult{ClaimedFreed: 1, Log: "\xfe"}, nil
	case "rename":
		f.sessions[session] = lines[len(lines)/2:]
		f.badName = "renamed"
		return sdk.CompactResult{ClaimedFreed: 1}, nil
	case "nothing":
		return sdk.CompactResult{ClaimedFreed: req.TokensNeeded * 10, Log: "lied"}, nil
	}
	size := func(ls []string) int { n, _ := sdk.CountTokens(req.Encoding, strings.Join(ls, "\n")); return n }
	before := size(lines)
	estimate := 0 // drop by per-line estimates, then check exactly
	for len(lines) > 0 && estimate < req.TokensNeeded {
		n, _ := sdk.CountTokens(req.Encoding, lines[0])
		estimate += n
		lines = lines[1:]
	}
	for len(lines) > 0 && before-size(lines) < req.TokensNeeded {
		lines = lines[1:]
	}
	freed := before - size(lines)
	f.sessions[session] = lines
	return sdk.CompactResult{ClaimedFreed: freed, Log: fmt.Sprintf("dropped lines, ~%d tokens", freed)}, nil
}

type fakeArgs struct {
	Text string `json:"text"`
}

func (f *fakePlugin) Apply(ctx context.Context, session, op string, args json.RawMessage) (json.RawMessage, error) {
	if err := f.enter("Apply"); err != nil {
		return nil, err
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.dieAfterApply {
		defer func() { f.dead = true }()
	}
	if f.badResult && op == "add" {
		f.sessions[session] = append(f.sessions[session], "bad")
		return json.RawMessage("{\"x\":\"\xff\""), nil
	}
	switch op {
	case "add":
		var a fakeArgs
		if err := json.Unmarshal(args, &a); err != nil || a.Text == "" {
			return nil, sdk.InvalidArgs("add wants {\"text\": non-empty}")
		}
		f.sessions[session] = append(f.sessions[session], a.Text)
		return json.RawMessage(fmt.Sprintf(`{"lines":%d}`, len(f.sessions[session]))), nil
	case "slow":
		release := f.slowApply
		f.mu.Unlock()
		<-ctx.Done() // the caller gives up; the stopped instance applies on SIGCONT
		go func() {
			<-release
			f.mu.Lock()
			f.sessions[session] = append(f.sessions[session], "slow")
			f.mu.Unlock()
		}()
		f.mu.Lock()
		return nil, ctx.Err()
	case "remove":
		var a fakeArgs
		_ = json.Unmarshal(args, &a)
		for i, l := range f.sessions[session] {
			if l == a.Text {
				f.sessions[session] = append(f.sessions[session][:i:i], f.sessions[session][i+1:]...)
				return json.RawMessage(`{}`), nil
			}
		}
		return nil, sdk.NotFound("line %q", a.Text)
	}
	return nil, sdk.UnknownOp(op)
}

func (f *fakePlugin) Prepared(_ context.Context, session string, _ sdk.Budget) error {
	if err := f.enter("Prepared"); err != nil {
		return err
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.preparedMark && f.preparedErr == nil {
		f.sessions[session] = append(f.sessions[session], fmt.Sprintf("prepared %d", len(f.sessions[session])))
	}
	return f.preparedErr
}

// Abort implements Aborter: the instance is dead from now on.
func (f *fakePlugin) Abort() {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.dead, f.aborted = true, true
}

func (f *fakePlugin) State(_ context.Context, session string) ([]byte, error) {
	if err := f.enter("State"); err != nil {
		return nil, err
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	return json.Marshal(f.sessions[session])
}

func (f *fakePlugin) Restore(_ context.Context, session string, state []byte) error {
	if err := f.enter("Restore"); err != nil {
		return err
	}
	var lines []string
	if err := json.Unmarshal(state, &lines); err != nil {
		return sdk.InvalidArgs("state: %v", err)
	}
	f.mu.Lock()
	delay, rerr := f.restoreDelay, f.restoreErr
	f.mu.Unlock()
	time.Sleep(delay)
	if rerr != nil {
		return rerr
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	f.sessions[session] = lines
	return nil
}

func (f *fakePlugin) EndSession(_ context.Context, session string) error {
	if err := f.enter("EndSession"); err != nil {
		return err
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	delete(f.sessions, session)
	return nil
}

// jsonAssembler renders the components as JSON: deterministic bytes.
type jsonAssembler struct{ calls int }

func (*jsonAssembler) Info() sdk.AssemblerInfo {
	return sdk.AssemblerInfo{Name: "json", ProtocolVersion: sdk.ProtocolVersion, Formats: []sdk.FormatInfo{{Name: "json", MediaType: "application/json"}}}
}

func (a *jsonAssembler) Assemble(_ context.Context, req sdk.AssembleRequest) (sdk.AssembleResult, error) {
	a.calls++
	b, err := json.Marshal(struct {
		Components []sdk.Component
		Agent      sdk.AgentIdentity
	}{req.Components, req.Agent})
	return sdk.AssembleResult{Payload: b, MediaType: "application/json"}, err
}

// carrier is a fakePlugin that answers state-changing calls with the
// session's state taken atomically with the call, as the SDK does.
type carrier struct{ *fakePlugin }

var _ StateCarrier = carrier{}

func (c carrier) stateNow(session string) []byte {
	c.mu.Lock()
	defer c.mu.Unlock()
	b, _ := json.Marshal(c.sessions[session])
	return b
}

func (c carrier) ApplyWithState(ctx context.Context, session, op string, args json.RawMessage) (json.RawMessage, []byte, error) {
	c.mu.Lock()
	die := c.dieAfterApply
	c.dieAfterApply = false
	c.mu.Unlock()
	out, err := c.fakePlugin.Apply(ctx, session, op, args)
	if err != nil {
		return nil, nil, err
	}
	st := c.stateNow(session)
	if die {
		c.set(func(f *fakePlugin) { f.dead = true })
	}
	return out, st, nil
}

func (c carrier) CompactWithState(ctx context.Context, session string, req sdk.CompactRequest) (sdk.CompactResult, []byte, error) {
	r, err := c.fakePlugin.Compact(ctx, session, req)
	if err != nil {
		return r, nil, err
	}
	return r, c.stateNow(session), nil
}

func (c carrier) PreparedWithState(ctx context.Context, session string, b sdk.Budget) ([]byte, error) {
	if err := c.fakePlugin.Prepared(ctx, session, b); err != nil {
		return nil, err
	}
	return c.stateNow(session), nil
}
