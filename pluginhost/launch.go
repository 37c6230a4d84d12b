package pluginhost

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/ctxhost/ctxhost/internal/wire"
	"github.com/ctxhost/ctxhost/internal/wire/pb"
	"github.com/ctxhost/ctxhost/sdk"
	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/go-plugin"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// Client is one launched plugin process. Exactly one of Context and
// Assembler is set, according to the Spec's Kind.
type Client struct {
	*Process
	Context   *ContextClient
	Assembler *AssemblerClient
}

// Launch starts the plugin binary of spec, completes the go-plugin
// handshake (negotiating the protocol version), and calls Describe. It is
// cheap to call again for the same spec, e.g. to restart a crashed plugin.
// On failure the process is killed and the error names plugin and path.
func Launch(ctx context.Context, spec Spec) (*Client, error) {
	fail := func(kind error, err error) (*Client, error) {
		if err == nil {
			return nil, fmt.Errorf("plugin %q (%s): %w", spec.Name, spec.Path, kind)
		}
		return nil, fmt.Errorf("plugin %q (%s): %w: %v", spec.Name, spec.Path, kind, err)
	}
	if spec.Kind != KindContext && spec.Kind != KindAssembler {
		return nil, fmt.Errorf("plugin %q (%s): unknown kind %q (want %s or %s)", spec.Name, spec.Path, spec.Kind, KindContext, KindAssembler)
	}
	if err := checkBinary(spec.Path); err != nil {
		return fail(err, nil)
	}
	execPath := spec.Path
	if spec.SHA256 != "" {
		bin, err := verifyBinary(spec.Path, spec.SHA256)
		if err != nil {
			return fail(err, nil)
		}
		defer bin.Close() // once the process runs, it holds the bytes itself
		execPath = bin.ExecPath
		if afterVerify != nil {
			afterVerify()
		}
	}
	cfg, err := clientConfig(ctx, spec, execPath)
	if err != nil {
		return nil, fmt.Errorf("plugin %q (%s): %w", spec.Name, spec.Path, err)
	}
	// Handshake failures show the plugin's stderr, the only place a
	// plugin can say why it did not start: go-plugin
	// logs raw stderr lines only at DEBUG, and its own message guesses at
	// a wrong architecture.
	stderr := &stderrTail{max: 8 << 10}
	cfg.Stderr = stderr
	pc := plugin.NewClient(cfg)
	proc := &Process{name: spec.Name, path: spec.Path, pc: pc, cmd: cfg.Cmd, shutdown: spec.ShutdownTimeout, log: cfg.Logger}
	rpc, err := pc.Client()
	if err != nil {
		pc.Kill() // waits until stderr is read to the end
		if tail := stderr.String(); tail != "" {
			cfg.Logger.Warn("plugin failed its handshake; its stderr follows", "stderr", tail)
			err = fmt.Errorf("%w\nplugin stderr:\n%s", err, tail)
		}
		return fail(classifyStartError(err), err)
	}
	// End of the handshake stderr part.
	if v := pc.NegotiatedVersion(); v != wire.ProtocolVersion1 {
		pc.Kill()
		return fail(ErrUnsupportedProtocol, fmt.Errorf("negotiated version %d", v))
	}
	raw, err := rpc.Dispense(string(spec.Kind))
	if err != nil {
		pc.Kill()
		return fail(ErrWrongKind, err)
	}
	c := &Client{Process: proc}
	var protocol int
	switch r := raw.(type) {
	case pb.ContextPluginClient:
		c.Context = &ContextClient{Process: proc, rpc: r}
		c.Context.info, err = c.Context.describe(ctx)
		protocol = c.Context.info.ProtocolVersion
	case pb.AssemblerClient:
		c.Assembler = &AssemblerClient{Process: proc, rpc: r}
		c.Assembler.info, err = c.Assembler.describe(ctx, spec.Deltas)
		protocol = c.Assembler.info.ProtocolVersion
	default:
		err = fmt.Errorf("dispensed %T", raw)
	}
	if err != nil {
		pc.Kill()
		if status.Code(err) == codes.Unimplemented {
			return fail(ErrWrongKind, fmt.Errorf("it does not serve a %s plugin: %v", spec.Kind, wire.FromStatus(err)))
		}
		return fail(ErrHandshake, fmt.Errorf("describe: %v", wire.FromStatus(err)))
	}
	if protocol != sdk.ProtocolVersion {
		pc.Kill()
		return fail(ErrUnsupportedProtocol, fmt.Errorf("Describe reports protocol version %d, host speaks %d", protocol, sdk.ProtocolVersion))
	}
	return c, nil
}

// afterVerify, when set (by tests), runs between the verification of a
// pinned binary and its start.
var afterVerify func()

// LaunchAll launches every spec concurrently. If any launch fails, the
// plugins that did start are killed and the errors are joined.
func LaunchAll(ctx context.Context, specs []Spec) ([]*Client, error) {
	clients := make([]*Client, len(specs))
	errs := make([]error, len(specs))
	var wg sync.WaitGroup
	for i, spec := range specs {
		wg.Go(func() { clients[i], errs[i] = Launch(ctx, spec) })
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		for _, c := range clients {
			if c != nil {
				c.Kill()
			}
		}
		return nil, err
	}
	return clients, nil
}

func checkBinary(path string) error {
	st, err := os.Stat(path)
	if err != nil {
		return ErrBinaryNotFound
	}
	if st.IsDir() || st.Mode().Perm()&0o111 == 0 {
		return ErrNotExecutable
	}
	return nil
}

// clientConfig is the go-plugin configuration of spec, running execPath
// (the verified binary when spec pins one) with spec.Path as argv[0].
func clientConfig(ctx context.Context, spec Spec, execPath string) (*plugin.ClientConfig, error) {
	log := spec.Logger
	if log == nil {
		log = hclog.Default()
	}
	log = log.Named(spec.Name)
	maxBytes := spec.MaxMessageBytes
	if maxBytes <= 0 {
		maxBytes = wire.DefaultMaxMessageBytes
	}
	timeout := spec.StartTimeout
	if timeout <= 0 {
		timeout = defaultStartTimeout
	}
	if dl, ok := ctx.Deadline(); ok && time.Until(dl) < timeout {
		timeout = max(time.Until(dl), time.Millisecond)
	}
	cmd := exec.Command(execPath, spec.Args...)
	cmd.Args[0] = spec.Path
	cmd.SysProcAttr = procAttr()
	// The host's environment first, then the spec's, then ours: for
	// duplicate keys the last one wins.
	cmd.Env = append(append(os.Environ(), spec.Env...), wire.EnvMaxMessageBytes+"="+strconv.Itoa(maxBytes))
	return &plugin.ClientConfig{
		HandshakeConfig:  wire.Handshake,
		VersionedPlugins: hostPlugins(),
		Cmd:              cmd,
		SkipHostEnv:      true, // already in cmd.Env, before the spec's overrides
		AllowedProtocols: []plugin.Protocol{plugin.ProtocolGRPC},
		StartTimeout:     timeout,
		Logger:           log,
		AutoMTLS:         !spec.NoAutoMTLS,
		GRPCDialOptions:  wire.DialOptions(maxBytes),
		SyncStdout:       &lineLogger{log: log, level: hclog.Warn, stream: "stdout", max: spec.MaxLogLine},
		SyncStderr:       &lineLogger{log: log, level: hclog.Warn, stream: "stderr", max: spec.MaxLogLine},
	}, nil
}

// hostPlugins is the host's half of both plugin kinds, per protocol version.
func hostPlugins() map[int]plugin.PluginSet {
	sets := wire.VersionedPlugins(wire.PluginContext, &wire.GRPCPlugin{
		Connect: func(c *grpc.ClientConn) any { return pb.NewContextPluginClient(c) },
	})
	for v, asm := range wire.VersionedPlugins(wire.PluginAssembler, &wire.GRPCPlugin{
		Connect: func(c *grpc.ClientConn) any { return pb.NewAssemblerClient(c) },
	}) {
		for name, p := range asm {
			sets[v][name] = p
		}
	}
	return sets
}

func classifyStartError(err error) error {
	switch {
	case errors.Is(err, plugin.ErrChecksumsDoNotMatch):
		return ErrChecksumMismatch
	case strings.Contains(strings.ToLower(err.Error()), "incompatible api version"):
		return ErrUnsupportedProtocol
	}
	return ErrHandshake
}
