// Package pluginhost launches plugin processes through HashiCorp go-plugin
// and is the host's client of them: one client per plugin kind
// (ContextClient, AssemblerClient) implements host.ContextPlugin or
// host.Assembler over gRPC, converting between the SDK's types and the wire
// messages and classifying errors (a dead process wraps supervise.ErrDead,
// which is host.ErrPluginDead; a plugin's answer keeps its SDK sentinel). It is the only part of the
// host side that knows about gRPC and go-plugin; it lives outside package
// host so that host and its subpackages import none of it.
package pluginhost

import (
	"errors"
	"time"

	"github.com/ctxhost/ctxhost/internal/wire"
	"github.com/hashicorp/go-hclog"
)

// Kind is the kind of plugin a binary serves: a context plugin or an
// assembler. It is the go-plugin plugin-set name the host dispenses.
type Kind string

// The plugin kinds.
const (
	KindContext   Kind = wire.PluginContext
	KindAssembler Kind = wire.PluginAssembler
)

// Spec says how to launch one plugin.
type Spec struct {
	// Name is the plugin's configured name; logs and errors use it.
	Name string
	// Kind is what the binary must serve.
	Kind Kind
	// Path is the plugin binary.
	Path string
	// Args are extra command-line arguments.
	Args []string
	// SHA256 is the binary's expected checksum in hex; empty skips the check.
	SHA256 string
	// StartTimeout bounds the handshake; zero means 10 s (or the context's
	// deadline if sooner).
	StartTimeout time.Duration
	// MaxMessageBytes is the gRPC message size limit in both directions,
	// passed to the plugin too; zero means 256 MiB.
	MaxMessageBytes int
	// NoAutoMTLS turns off go-plugin's automatic mutual TLS (on by default).
	NoAutoMTLS bool
	// Logger receives the plugin's log lines under the plugin's name; nil
	// means hclog's default logger.
	Logger hclog.Logger
	// Env are extra KEY=VALUE variables for the plugin process.
	Env []string
	// ShutdownTimeout bounds a graceful shutdown (Kill); the process is
	// then killed with SIGKILL. Zero means 3 s.
	ShutdownTimeout time.Duration
	// MaxLogLine caps one line the plugin writes to stdout or stderr; the
	// rest of a longer line is dropped and counted. Zero means 64 KiB.
	MaxLogLine int
	// Deltas, for an assembler with the delta capability, remembers what
	// it acknowledged of each stream; nil: the client makes its own. A
	// relaunched assembler's Spec may pass on its predecessor's.
	Deltas *Deltas
}

// Errors a launch can fail with; the returned error wraps one of them and
// names the plugin and its path.
var (
	ErrBinaryNotFound      = errors.New("plugin binary not found")
	ErrNotExecutable       = errors.New("plugin binary is not executable")
	ErrChecksumMismatch    = errors.New("plugin binary checksum does not match")
	ErrHandshake           = errors.New("plugin handshake failed")
	ErrUnsupportedProtocol = errors.New("plugin speaks an unsupported protocol version")
	ErrWrongKind           = errors.New("plugin is not of the expected kind")
)

const (
	defaultStartTimeout    = 10 * time.Second
	defaultShutdownTimeout = 3 * time.Second
	defaultMaxLogLine      = 64 << 10
)
