// Package python_test runs the Go conformance kit against the Python
// example plugin (ctxhost-plugin-pynotes) as a real process, launched the
// way the host launches it, and compares its round trip with the Go hello
// plugin's.
package python_test

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ctxhost/ctxhost/pluginhost"
	"github.com/ctxhost/ctxhost/sdk"
	"github.com/ctxhost/ctxhost/sdk/plugintest"
	"github.com/hashicorp/go-hclog"
)

// python is the interpreter the plugin's shebang names.
const python = "/usr/bin/python3"

// requirePython skips (or, under CI, fails) unless python can import the
// two modules the SDK needs; `make test` installs them.
func requirePython(tb testing.TB) {
	tb.Helper()
	out, err := exec.Command(python, "-c", "import grpc, google.protobuf").CombinedOutput()
	if err == nil {
		return
	}
	msg := "the Python SDK needs " + python + " with grpc and protobuf (Debian: apt-get install python3-grpcio python3-protobuf; `make test` installs them): " + err.Error() + "\n" + string(out)
	if os.Getenv("CI") != "" {
		tb.Fatal(msg)
	}
	tb.Skip(msg)
}

func pluginPath(tb testing.TB) string {
	p, err := filepath.Abs("ctxhost-plugin-pynotes")
	if err != nil {
		tb.Fatal(err)
	}
	return p
}

var options = plugintest.Options{
	Config: json.RawMessage(`{"max_notes": 50}`),
	Setup: []plugintest.Op{
		{Name: "add", Args: json.RawMessage(`{"text":"buy milk and bread on the way home"}`)},
		{Name: "add", Args: json.RawMessage(`{"text":"call the plumber about the kitchen sink"}`)},
		{Name: "add", Args: json.RawMessage(`{"text":"renew the passport before the trip in May"}`)},
	},
	InvalidArgs: []plugintest.Op{{Name: "add", Args: json.RawMessage(`{"text":""}`)}},
	// The Python SDK counts tokens like the host's approximate encoding.
	Encoding:   "approximate",
	NoAutoMTLS: true,
}

func TestConformance(t *testing.T) {
	requirePython(t)
	plugintest.RunContextBinary(t, pluginPath(t), options)
}

// TestBindingNameAndErrors checks what the kit cannot: the binding name
// reaches the plugin, a bad config is rejected as invalid args, and a
// plugin asked for AutoMTLS fails its handshake with a message saying what
// to change.
func TestBindingNameAndErrors(t *testing.T) {
	requirePython(t)
	ctx := context.Background()
	c, err := pluginhost.Launch(ctx, pluginhost.Spec{Name: "design_notes", Kind: pluginhost.KindContext,
		Path: pluginPath(t), NoAutoMTLS: true, Logger: hclog.NewNullLogger()})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Kill()
	if err := c.Context.Configure(ctx, json.RawMessage(`{"max_notes": 0}`)); err == nil {
		t.Error("Configure(max_notes = 0) succeeded")
	} else if !errors.Is(err, sdk.ErrInvalidArgs) {
		t.Errorf("Configure(max_notes = 0) = %v, want sdk.ErrInvalidArgs", err)
	}
	if _, err := c.Context.Apply(ctx, "s", "add", json.RawMessage(`{"text":"x"}`)); err != nil {
		t.Fatal(err)
	}
	comp, err := c.Context.Component(ctx, "s", "approximate")
	if err != nil || comp == nil || comp.Name != "design_notes" {
		t.Errorf("Component = %+v, %v; want it named after the binding design_notes", comp, err)
	}

	_, err = pluginhost.Launch(ctx, pluginhost.Spec{Name: "tls", Kind: pluginhost.KindContext,
		Path: pluginPath(t), Logger: hclog.NewNullLogger()})
	if err == nil || !strings.Contains(err.Error(), "auto_mtls = false") {
		t.Errorf("Launch with AutoMTLS: err = %v, want one saying to set auto_mtls = false", err)
	}
}

// TestPythonSummarizer: a Python Session with a summarize method declares
// the summarize capability, and the span, the previous summary and the
// limit reach it over the wire; its answer comes back.
func TestPythonSummarizer(t *testing.T) {
	requirePython(t)
	ctx := context.Background()
	path, err := filepath.Abs("ctxhost-plugin-pydigest")
	if err != nil {
		t.Fatal(err)
	}
	c, err := pluginhost.Launch(ctx, pluginhost.Spec{Name: "digest", Kind: pluginhost.KindContext,
		Path: path, NoAutoMTLS: true, Logger: hclog.NewNullLogger()})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Kill()
	if !c.Context.Info().HasCapability(sdk.CapSummarize) {
		t.Fatalf("capabilities %v lack %q", c.Context.Info().Capabilities, sdk.CapSummarize)
	}
	res, err := c.Context.Summarize(ctx, "s", sdk.SummarizeRequest{
		Messages: []sdk.Message{
			{ID: "m2", Role: sdk.RoleUser, Content: "deploy ticket T-4411 to staging"},
			{ID: "m3", Role: sdk.RoleAssistant, Parts: []sdk.Part{{Type: sdk.PartText, Text: "deployed build 88"}}},
		},
		Previous: "- m1 user: the task", MaxTokens: 100, Encoding: "approximate", Key: "sk-never-on-the-wire",
	})
	if err != nil {
		t.Fatal(err)
	}
	want := "- m1 user: the task\n- m2 user: deploy ticket T-4411 to staging\n- m3 assistant: deployed build 88"
	if res.Text != want || res.Model != "pydigest" {
		t.Fatalf("Summarize = %+v, want text %q", res, want)
	}
}
