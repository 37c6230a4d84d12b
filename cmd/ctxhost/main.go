// Command ctxhost is the context manager for LLM agents: it validates
// configurations, describes plugins, replays agent transcripts through the
// whole pipeline, explains a context and counts tokens.
//
// Exit codes: 0 ok, 1 runtime failure, 2 usage or configuration error
// (a malformed transcript counts as a usage error).
package main

import (
	"errors"
	"fmt"
	"io"
	"os"
)

// Exit codes.
const (
	exitOK      = 0
	exitRuntime = 1
	exitUsage   = 2
)

func main() {
	os.Exit(run(os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
}

// command is one subcommand.
type command struct {
	name    string
	summary string
	run     func(args []string, io stdio) error
}

// stdio are the streams a command reads and writes.
type stdio struct {
	in       io.Reader
	out, err io.Writer
}

func commands() []command {
	return []command{
		{"validate", "check a configuration", cmdValidate},
		{"plugins", "start and describe every configured plugin and assembler", cmdPlugins},
		{"run", "replay a transcript through the whole pipeline, turn by turn", cmdRun},
		{"inspect", "apply a transcript, prepare once and explain the context", cmdInspect},
		{"serve", "serve the context service over HTTP (Connect, gRPC, gRPC-Web)", cmdServe},
		{"memory", "read and write memory blocks through a running ctxhost serve", cmdMemory},
		{"events", "print the event feed of a running ctxhost serve, every session's", cmdEvents},
		{"checkpoints", "list, read, fork and rewind session checkpoints through a running ctxhost serve", cmdCheckpoints},
		{"tokens", "count the tokens of stdin or files", cmdTokens},
		{"version", "print the version", cmdVersion},
	}
}

// run dispatches args to a subcommand and maps its error to an exit code.
func run(args []string, in io.Reader, out, errw io.Writer) int {
	std := stdio{in: in, out: out, err: errw}
	if len(args) == 0 || args[0] == "-h" || args[0] == "--help" || args[0] == "help" {
		usage(errw)
		if len(args) == 0 {
			return exitUsage
		}
		return exitOK
	}
	for _, c := range commands() {
		if c.name == args[0] {
			return exitCode(errw, c.run(args[1:], std))
		}
	}
	fmt.Fprintf(errw, "ctxhost: unknown command %q\n\n", args[0])
	usage(errw)
	return exitUsage
}

func usage(w io.Writer) {
	fmt.Fprintln(w, "usage: ctxhost <command> [flags] [args]\n\ncommands:")
	for _, c := range commands() {
		fmt.Fprintf(w, "  %-9s %s\n", c.name, c.summary)
	}
	fmt.Fprintln(w, "\nRun 'ctxhost <command> -h' for a command's flags.")
}

// usageError is a problem with the command line, the configuration or the
// input files: exit code 2. Its message has already been printed when
// printed is set.
type usageError struct {
	err     error
	printed bool
}

func (e *usageError) Error() string { return e.err.Error() }
func (e *usageError) Unwrap() error { return e.err }

func usageErrorf(format string, a ...any) error {
	return &usageError{err: fmt.Errorf(format, a...)}
}

// errHelp is returned after -h printed the flags.
var errHelp = errors.New("help requested")

func exitCode(w io.Writer, err error) int {
	if err == nil || errors.Is(err, errHelp) {
		return exitOK
	}
	var ue *usageError
	if errors.As(err, &ue) {
		if !ue.printed {
			fmt.Fprintf(w, "ctxhost: %v\n", err)
		}
		return exitUsage
	}
	fmt.Fprintf(w, "ctxhost: %v\n", err)
	return exitRuntime
}
