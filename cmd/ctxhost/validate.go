package main

import "fmt"

func cmdValidate(args []string, std stdio) error {
	fs := newFlagSet("validate", std.err, "")
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
	fmt.Fprintf(std.out, "configuration is valid: %d model(s), %d plugin(s), %d assembler(s), %d context(s), %d agent(s)\n",
		len(cfg.Models), len(cfg.Plugins), len(cfg.Assemblers), len(cfg.Contexts), len(cfg.Agents))
	return nil
}
