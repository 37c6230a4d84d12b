// Package plugintest is the conformance kit for ctxhost plugins. A plugin
// author calls it from their own go test, against the plugin in-process
// (RunContextPlugin) and as a real process (RunContextBinary):
//
//	func TestConformance(t *testing.T) {
//		plugintest.RunContextPlugin(t, notes.Plugin{}, plugintest.Options{
//			Setup: []plugintest.Op{{Name: "add", Args: json.RawMessage(`{"text":"buy milk"}`)}},
//		})
//	}
//
// Every check is a subtest; ContextChecks and AssemblerChecks list them, and
// each returns an error instead of failing, so they can be run by hand.
package plugintest

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"sync"
	"testing"
	"time"

	"github.com/ctxhost/ctxhost/host"
	"github.com/ctxhost/ctxhost/pluginhost"
	"github.com/ctxhost/ctxhost/sdk"
	"github.com/hashicorp/go-hclog"
)

// ContextTarget is the host's view of a context plugin: an
// sdk.LocalPlugin or a pluginhost.ContextClient.
type ContextTarget = host.ContextPlugin

// AssemblerTarget is the host's view of an assembler.
type AssemblerTarget = host.Assembler

// Op is one Apply call: an op name and its JSON args.
type Op struct {
	Name string
	Args json.RawMessage
}

// Options tell the kit how to drive a context plugin, whose ops it cannot
// guess.
type Options struct {
	// Config is passed to Configure before the checks (nil: none).
	Config json.RawMessage
	// Setup are ops that build a non-trivial state in a fresh session: the
	// component afterwards must differ from a fresh session's. Required.
	Setup []Op
	// InvalidArgs are calls of known ops with invalid args, each of which
	// must fail with sdk.ErrInvalidArgs and change nothing.
	InvalidArgs []Op
	// Encoding is the tokenizer encoding to count with (default cl100k_base).
	Encoding string
	// Sessions is how many sessions the isolation check runs at once
	// (default 8).
	Sessions int
	// NoAutoMTLS launches a binary (RunContextBinary) without go-plugin's
	// automatic mutual TLS, as `auto_mtls = false` in its HCL block does:
	// for plugins whose SDK has no TLS, such as the Python SDK.
	NoAutoMTLS bool
	// CallDeadline is the deadline of every call the kit makes (default
	// DefaultCallDeadline, the host's default plugin timeout): a call
	// that takes longer fails its check.
	CallDeadline time.Duration
	// DeterminismDelay is how long the determinism check waits before it
	// asks for the component again (default DefaultDeterminismDelay), so
	// that output depending on the clock shows.
	DeterminismDelay time.Duration
}

// DefaultDeterminismDelay is the wait of the determinism check: over a
// second, so a component that renders the time to the second differs.
const DefaultDeterminismDelay = 1100 * time.Millisecond

func (o Options) withDefaults() Options {
	if o.Encoding == "" {
		o.Encoding = "cl100k_base"
	}
	if o.Sessions <= 0 {
		o.Sessions = 8
	}
	if o.CallDeadline <= 0 {
		o.CallDeadline = DefaultCallDeadline
	}
	if o.DeterminismDelay <= 0 {
		o.DeterminismDelay = DefaultDeterminismDelay
	}
	return o
}

// RunContextPlugin runs every context check against p in-process.
func RunContextPlugin(t *testing.T, p sdk.Plugin, opts Options) {
	t.Helper()
	RunContext(t, sdk.NewLocalPlugin(p), opts)
}

// RunContextBinary launches the plugin binary at path through
// package pluginhost (as the host would) and runs every context check on it.
func RunContextBinary(t *testing.T, path string, opts Options) {
	t.Helper()
	c := launch(t, path, pluginhost.KindContext, opts.NoAutoMTLS)
	RunContext(t, c.Context, opts)
}

// Binding is the binding name the kit runs a plugin under: every call's
// context carries it (sdk.WithBinding), and a binary is launched under it.
const Binding = "conformance"

// RunContext runs every check of ContextChecks against target, each as a
// subtest, after configuring it with opts.Config. Every call carries the
// binding name Binding.
func RunContext(t *testing.T, target ContextTarget, opts Options) {
	t.Helper()
	opts = opts.withDefaults()
	target = Deadlined(target, opts.CallDeadline)
	ctx := sdk.WithBinding(context.Background(), Binding)
	if err := target.Configure(ctx, opts.Config); err != nil {
		t.Fatalf("Configure(%s): %v", opts.Config, err)
	}
	for _, check := range ContextChecks {
		t.Run(check.Name, func(t *testing.T) {
			if err := check.Run(ctx, target, opts); err != nil {
				t.Fatalf("%s: %v", check.Doc, err)
			}
		})
	}
}

// RunAssembler runs every assembler check against a in-process.
func RunAssembler(t *testing.T, a sdk.Assembler, opts AssemblerOptions) {
	t.Helper()
	RunAssemblerTarget(t, sdk.NewLocalAssembler(a), opts)
}

// RunAssemblerBinary launches the assembler binary at path and runs every
// assembler check on it.
func RunAssemblerBinary(t *testing.T, path string, opts AssemblerOptions) {
	t.Helper()
	c := launch(t, path, pluginhost.KindAssembler, false)
	RunAssemblerTarget(t, c.Assembler, opts)
}

// RunAssemblerTarget runs every check of AssemblerChecks against target.
func RunAssemblerTarget(t *testing.T, target AssemblerTarget, opts AssemblerOptions) {
	t.Helper()
	opts = opts.withDefaults()
	for _, check := range AssemblerChecks {
		t.Run(check.Name, func(t *testing.T) {
			if err := check.Run(context.Background(), target, opts); err != nil {
				t.Fatalf("%s: %v", check.Doc, err)
			}
		})
	}
}

func launch(t *testing.T, path string, kind pluginhost.Kind, noAutoMTLS bool) *pluginhost.Client {
	t.Helper()
	out := &testLog{t: t}
	t.Cleanup(out.stop) // registered first, runs last: after the kill
	c, err := pluginhost.Launch(context.Background(), pluginhost.Spec{
		Name: Binding, Kind: kind, Path: path, NoAutoMTLS: noAutoMTLS,
		Logger: hclog.New(&hclog.LoggerOptions{Output: out, Level: hclog.Debug}),
	})
	if err != nil {
		t.Fatalf("launch %s: %v", path, err)
	}
	t.Cleanup(c.Kill)
	return c
}

// testLog sends the plugin's log lines to the test log until stopped.
type testLog struct {
	t       *testing.T
	mu      sync.Mutex
	stopped bool
}

var _ io.Writer = (*testLog)(nil)

func (w *testLog) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if !w.stopped {
		w.t.Log(string(bytes.TrimRight(p, "\n")))
	}
	return len(p), nil
}

func (w *testLog) stop() {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.stopped = true
}
