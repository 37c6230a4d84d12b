package pluginhost_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/ctxhost/ctxhost/host"
	"github.com/ctxhost/ctxhost/pluginhost"
	"github.com/ctxhost/ctxhost/sdk"
	"github.com/google/go-cmp/cmp"
	"github.com/hashicorp/go-hclog"
)

// syncBuffer is a goroutine-safe log sink.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// waitFor polls cond for up to 10 s; plugin output arrives asynchronously.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		if cond() {
			return
		}
	}
	t.Fatalf("timed out waiting for %s", what)
}

func spec(name string, env ...string) pluginhost.Spec {
	return pluginhost.Spec{Name: name, Kind: pluginhost.KindContext, Path: testPlugin, Env: env,
		Logger: hclog.NewNullLogger()}
}

func launchContext(t *testing.T, s pluginhost.Spec) *pluginhost.ContextClient {
	t.Helper()
	c, err := pluginhost.Launch(context.Background(), s)
	if err != nil {
		t.Fatalf("Launch: %v", err)
	}
	t.Cleanup(c.Kill)
	return c.Context
}

func apply(t *testing.T, p host.ContextPlugin, session, op string, args any) {
	t.Helper()
	raw, _ := json.Marshal(args)
	if _, err := p.Apply(context.Background(), session, op, raw); err != nil {
		t.Fatalf("Apply %s: %v", op, err)
	}
}

func TestContextPluginRoundTrip(t *testing.T) {
	ctx := context.Background()
	p := launchContext(t, spec("echo"))
	info := p.Info()
	if info.Name != "echo" || info.ProtocolVersion != sdk.ProtocolVersion {
		t.Fatalf("Info = %+v", info)
	}
	if diff := cmp.Diff([]string{sdk.CapCompact, sdk.CapState}, info.Capabilities); diff != "" {
		t.Errorf("capabilities (-want +got):\n%s", diff)
	}
	apply(t, p, "s1", "set", map[string]any{"text": "hello"})
	got, err := p.Component(ctx, "s1", "cl100k_base")
	if err != nil {
		t.Fatal(err)
	}
	// The plugin names its component after the binding the host sent: the
	// spec's name, or the caller's (sdk.WithBinding).
	want := &sdk.Component{Name: "echo", Slot: sdk.SlotContext, Text: "hello"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Component (-want +got):\n%s", diff)
	}
	if got, err := p.Component(sdk.WithBinding(ctx, "design_docs"), "s1", "cl100k_base"); err != nil || got.Name != "design_docs" {
		t.Errorf("Component with binding design_docs = %+v, %v", got, err)
	}
	state, err := p.State(ctx, "s1")
	if err != nil {
		t.Fatal(err)
	}
	if err := p.Restore(ctx, "s2", state); err != nil {
		t.Fatal(err)
	}
	if got2, _ := p.Component(ctx, "s2", "cl100k_base"); got2 == nil || got2.Text != "hello" {
		t.Errorf("restored component = %+v, want text hello", got2)
	}
	if err := p.EndSession(ctx, "s1"); err != nil {
		t.Fatal(err)
	}
	if got3, _ := p.Component(ctx, "s1", "cl100k_base"); got3 == nil || got3.Text != "" {
		t.Errorf("component after EndSession = %+v, want empty text", got3)
	}
	if err := p.Prepared(ctx, "s2", sdk.Budget{Window: 100}); err != nil {
		t.Errorf("Prepared: %v", err)
	}
}

func TestLargeComponentRoundTrip(t *testing.T) {
	p := launchContext(t, spec("echo"))
	const size = 6 << 20 / 5 * 5 // above gRPC's 4 MiB default
	apply(t, p, "big", "set", map[string]any{"size": size})
	c, err := p.Component(context.Background(), "big", "cl100k_base")
	if err != nil {
		t.Fatal(err)
	}
	if len(c.Text) != size {
		t.Errorf("component text is %d bytes, want %d", len(c.Text), size)
	}
}

func TestMaxMessageBytesIsEnforced(t *testing.T) {
	s := spec("small")
	s.MaxMessageBytes = 1 << 20
	p := launchContext(t, s)
	// The answer to Apply carries the session's state, 2 MiB too: the
	// limit stops it there already.
	_, err := p.Apply(context.Background(), "s", "set", json.RawMessage(`{"size":2097152}`))
	if err == nil || !strings.Contains(err.Error(), "larger than max") {
		t.Fatalf("a 2 MiB state passed a 1 MiB limit: %v", err)
	}
	if _, err := p.Component(context.Background(), "s", "cl100k_base"); err == nil {
		t.Fatal("a 2 MiB component passed a 1 MiB limit")
	}
}

func TestErrorsMapToSentinels(t *testing.T) {
	p := launchContext(t, spec("echo"))
	ctx := context.Background()
	tests := []struct {
		op, args string
		want     error
		contains string
	}{
		{"nope", `{}`, sdk.ErrUnknownOp, `unknown op "nope"`},
		{"set", `{"size":-1}`, sdk.ErrInvalidArgs, "negative size"},
		{"set", `{not json`, sdk.ErrInvalidArgs, "not valid JSON"},
	}
	for _, tt := range tests {
		_, err := p.Apply(ctx, "s", tt.op, json.RawMessage(tt.args))
		if !errors.Is(err, tt.want) || !strings.Contains(err.Error(), tt.contains) {
			t.Errorf("Apply(%s, %s) = %v, want %v containing %q", tt.op, tt.args, err, tt.want, tt.contains)
		}
		if errors.Is(err, host.ErrPluginDead) {
			t.Errorf("Apply(%s, %s) error claims the plugin is dead: %v", tt.op, tt.args, err)
		}
	}
}

func TestLaunchFailures(t *testing.T) {
	dir := t.TempDir()
	notExec := filepath.Join(dir, "not-executable")
	data, err := os.ReadFile(testPlugin)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(notExec, data, 0o644); err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(data)
	wrongSum := strings.Repeat("ab", 32)
	tests := []struct {
		name string
		spec pluginhost.Spec
		want error
	}{
		{"missing", pluginhost.Spec{Path: filepath.Join(dir, "nope")}, pluginhost.ErrBinaryNotFound},
		{"not-executable", pluginhost.Spec{Path: notExec}, pluginhost.ErrNotExecutable},
		{"checksum", pluginhost.Spec{SHA256: wrongSum}, pluginhost.ErrChecksumMismatch},
		{"garbage", pluginhost.Spec{Env: []string{"CTXHOST_TEST_MODE=garbage"}}, pluginhost.ErrHandshake},
		{"v2-only", pluginhost.Spec{Env: []string{"CTXHOST_TEST_MODE=v2"}}, pluginhost.ErrUnsupportedProtocol},
		{"wrong-kind", pluginhost.Spec{Env: []string{"CTXHOST_TEST_MODE=assembler"}}, pluginhost.ErrWrongKind},
		{"right-checksum", pluginhost.Spec{SHA256: hex.EncodeToString(sum[:])}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := tt.spec
			s.Name, s.Kind, s.Logger = tt.name, pluginhost.KindContext, hclog.NewNullLogger()
			if s.Path == "" {
				s.Path = testPlugin
			}
			c, err := pluginhost.Launch(context.Background(), s)
			if c != nil {
				defer c.Kill()
			}
			if !errors.Is(err, tt.want) || (err == nil) != (tt.want == nil) {
				t.Fatalf("Launch error = %v, want %v", err, tt.want)
			}
			if err != nil && (!strings.Contains(err.Error(), tt.name) || !strings.Contains(err.Error(), s.Path)) {
				t.Errorf("error %q does not name plugin %q and path %q", err, tt.name, s.Path)
			}
		})
	}
}

// TestHandshakeFailureShowsStderr: a plugin that dies before its handshake
// has its stderr in the error and in the log at WARN.
func TestHandshakeFailureShowsStderr(t *testing.T) {
	var out syncBuffer
	s := spec("broken")
	s.Env = []string{"CTXHOST_TEST_MODE=traceback"}
	s.Logger = hclog.New(&hclog.LoggerOptions{Name: "host", Output: &out, Level: hclog.Warn})
	c, err := pluginhost.Launch(context.Background(), s)
	if c != nil {
		c.Kill()
	}
	const want = "No module named 'grpc'"
	if !errors.Is(err, pluginhost.ErrHandshake) || !strings.Contains(err.Error(), want) {
		t.Errorf("Launch error = %v, want a handshake error carrying the plugin's stderr", err)
	}
	if log := out.String(); !strings.Contains(log, "[WARN]") || !strings.Contains(log, want) {
		t.Errorf("the plugin's stderr is not logged at WARN:\n%s", log)
	}
}

func TestPluginOutputIsLogged(t *testing.T) {
	var out syncBuffer
	s := spec("chatty")
	s.Logger = hclog.New(&hclog.LoggerOptions{Name: "host", Output: &out, Level: hclog.Trace})
	p := launchContext(t, s)
	apply(t, p, "s", "print", map[string]any{"text": "stray stdout line"})
	apply(t, p, "s", "log", map[string]any{"text": "plugin error line", "level": "error"})
	waitFor(t, "both lines in the host log", func() bool {
		log := out.String()
		return strings.Contains(log, "stray stdout line") && strings.Contains(log, "plugin error line")
	})
	for _, line := range strings.Split(out.String(), "\n") {
		switch {
		case strings.Contains(line, "stray stdout line"):
			if !strings.Contains(line, "[WARN]") || !strings.Contains(line, "host.chatty") {
				t.Errorf("stdout line not logged as a warning under the plugin's name: %q", line)
			}
		case strings.Contains(line, "plugin error line"):
			if !strings.Contains(line, "[ERROR]") || !strings.Contains(line, "host.chatty") {
				t.Errorf("plugin log line not re-emitted at its level under the plugin's name: %q", line)
			}
		}
	}
}

func TestKilledPluginIsDead(t *testing.T) {
	c, err := pluginhost.Launch(context.Background(), spec("victim"))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Kill()
	if err := syscall.Kill(c.Pid(), syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the process to exit", c.Exited)
	_, err = c.Context.Component(context.Background(), "s", "cl100k_base")
	if !errors.Is(err, host.ErrPluginDead) || !strings.Contains(err.Error(), "victim") {
		t.Fatalf("Component after SIGKILL = %v, want an error wrapping host.ErrPluginDead naming the plugin", err)
	}
}

func TestAssembler(t *testing.T) {
	s := spec("upper", "CTXHOST_TEST_MODE=assembler")
	s.Kind = pluginhost.KindAssembler
	c, err := pluginhost.Launch(context.Background(), s)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Kill()
	a := c.Assembler
	if a.Info().Name != "upper" || len(a.Info().Formats) != 1 {
		t.Fatalf("Info = %+v", a.Info())
	}
	req := sdk.AssembleRequest{Format: "text", Components: []sdk.Component{{Name: "a", Text: "ab"}, {Name: "b", Text: "c"}}}
	res, err := a.Assemble(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(sdk.AssembleResult{Payload: []byte("ABC"), MediaType: "text/plain"}, res); diff != "" {
		t.Errorf("Assemble (-want +got):\n%s", diff)
	}
	req.Format = "nope"
	if _, err := a.Assemble(context.Background(), req); !errors.Is(err, sdk.ErrInvalidArgs) {
		t.Errorf("Assemble(unknown format) = %v, want ErrInvalidArgs", err)
	}
}

// TestAssemblerRelease: a session that leaves the host's memory leaves
// the assembler process's too: the host forgets its delta stream and
// tells the process, which drops the stream's base and calls the
// assembler's ReleaseSession; the session's next request goes whole.
func TestAssemblerRelease(t *testing.T) {
	var out syncBuffer
	s := spec("upper", "CTXHOST_TEST_MODE=assembler", sdk.EnvLogLevel+"=debug")
	s.Kind = pluginhost.KindAssembler
	s.Logger = hclog.New(&hclog.LoggerOptions{Name: "host", Output: &out, Level: hclog.Trace})
	c, err := pluginhost.Launch(context.Background(), s)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Kill()
	a := c.Assembler
	req := sdk.AssembleRequest{Session: "s1", Format: "text", Components: []sdk.Component{{Name: "a", Text: "ab"}}}
	for range 2 {
		if _, err := a.Assemble(context.Background(), req); err != nil {
			t.Fatal(err)
		}
	}
	if st := a.Deltas().Stats(); st.Deltas != 1 {
		t.Fatalf("the second request did not go as a delta: %+v", st)
	}
	a.ReleaseSession("s1")
	waitFor(t, "the release in the process's log", func() bool {
		released := false // the serve side's line; its fields come in any order
		for _, line := range strings.Split(out.String(), "\n") {
			released = released || strings.Contains(line, "released:") && strings.Contains(line, "session=s1") && strings.Contains(line, "streams=1")
		}
		return released && strings.Contains(out.String(), "upper released session s1")
	})
	if _, err := a.Assemble(context.Background(), req); err != nil {
		t.Fatal(err)
	}
	if st := a.Deltas().Stats(); st.Deltas != 1 || st.Resent != 0 {
		t.Errorf("the request after the release did not go whole: %+v", st)
	}
}

func TestRegistryKillAllAndSignal(t *testing.T) {
	var reg pluginhost.Registry
	clients, err := reg.LaunchAll(context.Background(), []pluginhost.Spec{spec("a"), spec("b")})
	if err != nil {
		t.Fatal(err)
	}
	if reg.Len() != 2 {
		t.Fatalf("Len = %d, want 2", reg.Len())
	}
	got := make(chan os.Signal, 1)
	stop := reg.KillOnSignal(func(s os.Signal) { got <- s }, syscall.SIGUSR1)
	defer stop()
	if err := syscall.Kill(os.Getpid(), syscall.SIGUSR1); err != nil {
		t.Fatal(err)
	}
	select {
	case s := <-got:
		if s != syscall.SIGUSR1 {
			t.Errorf("handler got %v", s)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("signal handler did not run")
	}
	for _, c := range clients {
		if !c.Exited() {
			t.Errorf("plugin %s still running after the signal", c.Name())
		}
	}
	if reg.Len() != 0 {
		t.Errorf("Len after KillAll = %d", reg.Len())
	}
}

func TestLaunchAllFailsAsAWhole(t *testing.T) {
	bad := spec("bad")
	bad.Path = filepath.Join(t.TempDir(), "missing")
	_, err := pluginhost.LaunchAll(context.Background(), []pluginhost.Spec{spec("good"), bad})
	if !errors.Is(err, pluginhost.ErrBinaryNotFound) {
		t.Fatalf("LaunchAll = %v, want ErrBinaryNotFound", err)
	}
}
