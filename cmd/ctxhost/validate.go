package main

import (
	"context"
	"fmt"
	"os"

	"github.com/ctxhost/ctxhost/engine"
)

// cmdValidate checks a configuration: the HCL itself, then (unless
// -offline) every plugin and assembler it declares, started and described,
// each plugin's config body against the schema the plugin declares and each
// format against the formats its assembler offers.
func cmdValidate(args []string, std stdio) error {
	fs := newFlagSet("validate", std.err, "")
	var cf configFlags
	cf.register(fs, false)
	offline := fs.Bool("offline", false, "do not start the plugins: their config bodies and the assembler formats are not checked")
	allowOptional := fs.Bool("allow-optional", false, "an optional plugin that does not start is a warning, not a failure")
	if err := parse(fs, args); err != nil {
		return err
	}
	cf.paths = append(cf.paths, fs.Args()...)
	cfg, err := cf.load(std.err)
	if err != nil {
		return err
	}
	summary := fmt.Sprintf("%d model(s), %d plugin(s), %d assembler(s), %d context(s), %d agent(s)",
		len(cfg.Models), len(cfg.Plugins), len(cfg.Assemblers), len(cfg.Contexts), len(cfg.Agents))
	if *offline {
		fmt.Fprintf(std.out, "configuration is valid: %s\nnot checked (-offline): plugin config bodies and assembler formats; no plugin was started\n", summary)
		return nil
	}
	plugins, _, err := engine.Describe(context.Background(), cfg, engine.NewLogger(cfg.Host, os.Stderr))
	if err != nil {
		return startError(std.err, cfg, err)
	}
	checked, failed := 0, 0
	for _, p := range plugins {
		if p.Unavailable != nil {
			failed++
			fmt.Fprintf(std.err, "warning: optional plugin %q did not start, its config body was not checked: %v\n", p.Config.Name, p.Unavailable)
			continue
		}
		checked++
	}
	if failed > 0 && !*allowOptional {
		return fmt.Errorf("%d optional plugin(s) did not start (their sessions would run without them); -allow-optional accepts that", failed)
	}
	fmt.Fprintf(std.out, "configuration is valid: %s\nchecked by starting every plugin and assembler: %d plugin config bodies, %d assembler formats\n",
		summary, checked, len(cfg.Assemblers))
	if failed > 0 {
		fmt.Fprintf(std.out, "%d optional plugin(s) did not start (allowed by -allow-optional)\n", failed)
	}
	return nil
}
