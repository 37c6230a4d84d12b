package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/hashicorp/hcl/v2"

	"github.com/ctxhost/ctxhost/config"
)

// listFlag is a repeatable string flag.
type listFlag []string

func (l *listFlag) String() string     { return strings.Join(*l, ",") }
func (l *listFlag) Set(v string) error { *l = append(*l, v); return nil }

// configFlags are the flags of every command that reads a configuration.
type configFlags struct {
	paths   listFlag
	vars    listFlag
	context string
}

func (c *configFlags) register(fs *flag.FlagSet, withContext bool) {
	fs.Var(&c.paths, "config", "configuration file or directory (repeatable)")
	fs.Var(&c.vars, "var", "set a variable: NAME=VALUE (repeatable)")
	if withContext {
		fs.StringVar(&c.context, "context", "", "context profile (default: the first declared)")
	}
}

// load loads and validates the configuration; diagnostics are printed to
// w, and the error is a usageError.
func (c *configFlags) load(w io.Writer) (*config.Config, error) {
	if len(c.paths) == 0 {
		return nil, usageErrorf("no configuration: give -config FILE or DIR")
	}
	vars := map[string]string{}
	for _, kv := range c.vars {
		name, value, ok := strings.Cut(kv, "=")
		if !ok || name == "" {
			return nil, usageErrorf("-var %q: want NAME=VALUE", kv)
		}
		vars[name] = value
	}
	cfg, diags := config.Load(c.paths, vars, os.Environ())
	printDiagnostics(w, diags, cfg.Files)
	if diags.HasErrors() {
		return nil, &usageError{err: fmt.Errorf("configuration has %d error(s)", len(diags.Errs())), printed: true}
	}
	return cfg, nil
}

// newFlagSet returns a FlagSet that reports errors instead of exiting.
func newFlagSet(name string, w io.Writer, argsUsage string) *flag.FlagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(w)
	fs.Usage = func() {
		fmt.Fprintf(w, "usage: ctxhost %s [flags] %s\n\nflags:\n", name, argsUsage)
		fs.PrintDefaults()
	}
	return fs
}

// parse parses args, mapping -h to errHelp and bad flags to a usageError.
func parse(fs *flag.FlagSet, args []string) error {
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return errHelp
		}
		return &usageError{err: err, printed: true}
	}
	return nil
}

// printDiagnostics prints one "file:line:col: summary" line per diagnostic,
// then each in full with its source line (as Terraform prints them).
func printDiagnostics(w io.Writer, diags hcl.Diagnostics, files map[string]*hcl.File) {
	if len(diags) == 0 {
		return
	}
	for _, line := range config.DiagnosticLines(diags) {
		fmt.Fprintln(w, line)
	}
	fmt.Fprintln(w)
	fmt.Fprint(w, config.FormatDiagnostics(diags, files))
}
