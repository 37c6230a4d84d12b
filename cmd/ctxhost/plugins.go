package main

import (
	"context"
	"fmt"
	"io"
	"os"

	"github.com/ctxhost/ctxhost/config"
	"github.com/ctxhost/ctxhost/engine"
)

func cmdPlugins(args []string, std stdio) error {
	fs := newFlagSet("plugins", std.err, "")
	var cf configFlags
	cf.register(fs, false)
	if err := parse(fs, args); err != nil {
		return err
	}
	cf.paths = append(cf.paths, fs.Args()...)
	cfg, err := cf.load(std.err)
	if err != nil {
		return err
	}
	plugins, assemblers, err := engine.Describe(context.Background(), cfg, engine.NewLogger(cfg.Host, os.Stderr))
	if err != nil {
		return startError(std.err, cfg, err)
	}
	printPlugins(std.out, plugins)
	printAssemblers(std.out, assemblers)
	return nil
}

// startError prints a configuration error found while starting plugins
// with its HCL source and returns a usageError; other errors pass through.
func startError(w io.Writer, cfg *config.Config, err error) error {
	if ce, ok := err.(*engine.ConfigError); ok {
		printDiagnostics(w, ce.Diags, cfg.Files)
		return &usageError{err: err, printed: true}
	}
	return err
}

func printPlugins(w io.Writer, plugins []engine.PluginDescription) {
	for _, p := range plugins {
		fmt.Fprintf(w, "plugin %q  (%s)\n", p.Config.Name, p.Config.RunsFrom())
		if p.Unavailable != nil {
			fmt.Fprintf(w, "  unavailable: %v\n  required:    false (runs without it)\n\n", p.Unavailable)
			continue
		}
		fmt.Fprintf(w, "  kind:        context\n  name:        %s\n  version:     %s\n", p.Info.Name, orDash(p.Info.Version))
		if p.Info.Description != "" {
			fmt.Fprintf(w, "  description: %s\n", p.Info.Description)
		}
		fmt.Fprintf(w, "  priority:    %d%s\n", p.Priority, overridden(p.Config.Priority != nil, fmt.Sprint(p.Info.Priority)))
		fmt.Fprintf(w, "  compactable: %t%s\n", p.Compactable, overridden(p.Config.Compactable != nil, fmt.Sprint(p.Info.Compactable)))
		fmt.Fprintf(w, "  required:    %t\n  timeout:     %s\n", p.Config.Required, p.Config.Timeout)
		if len(p.Info.Capabilities) > 0 {
			fmt.Fprintf(w, "  capabilities: %v\n", p.Info.Capabilities)
		}
		if len(p.Info.Ops) > 0 {
			fmt.Fprintln(w, "  ops:")
			for _, op := range p.Info.Ops {
				fmt.Fprintf(w, "    %-12s %s\n", op.Name, op.Description)
			}
		}
		if len(p.Info.ConfigSchema) > 0 {
			fmt.Fprintln(w, "  config:")
			for _, f := range p.Info.ConfigSchema {
				fmt.Fprintf(w, "    %-12s %-12s %s\n", f.Name, f.Type, f.Description)
			}
		}
		fmt.Fprintln(w)
	}
}

func printAssemblers(w io.Writer, assemblers []engine.AssemblerDescription) {
	for _, a := range assemblers {
		fmt.Fprintf(w, "assembler %q  (%s)\n", a.Config.Name, a.Config.RunsFrom())
		fmt.Fprintf(w, "  kind:        assembler\n  name:        %s\n  version:     %s\n", a.Info.Name, orDash(a.Info.Version))
		if a.Info.Description != "" {
			fmt.Fprintf(w, "  description: %s\n", a.Info.Description)
		}
		format := a.Format
		if a.Config.Format == "" && format != "" {
			format += "  (the first declared; not set in HCL)"
		}
		fmt.Fprintf(w, "  format:      %s\n  formats:\n", orDash(format))
		for _, f := range a.Info.Formats {
			fmt.Fprintf(w, "    %-6s %-22s %s\n", f.Name, f.MediaType, f.Description)
		}
		fmt.Fprintln(w)
	}
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

func overridden(set bool, declared string) string {
	if !set {
		return ""
	}
	return "  (set in HCL; the plugin declares " + declared + ")"
}
