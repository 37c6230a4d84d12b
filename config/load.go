package config

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclparse"
	"github.com/zclconf/go-cty/cty"
	"github.com/zclconf/go-cty/cty/function"
)

// Load parses the configuration files in paths (a directory stands for its
// *.hcl and *.hcl.json files, sorted by name), merges them, resolves
// variables (vars holds -var name=value pairs; env is the process
// environment as KEY=VALUE, where CTXHOST_VAR_name sets var.name and env()
// looks values up) and validates the result, plugin binaries included.
//
// Every problem is reported at once. The returned Config is never nil: its
// Files are needed to format the diagnostics. It must not be used when
// diags.HasErrors(). Load never starts a plugin.
func Load(paths []string, vars map[string]string, env []string) (*Config, hcl.Diagnostics) {
	cfg := &Config{Host: Host{LogLevel: DefaultLogLevel, LogFormat: DefaultLogFormat, CheckpointsKeepLast: DefaultCheckpointsKeepLast}}
	var diags hcl.Diagnostics
	files := expandPaths(paths, &diags)
	if len(files) == 0 && !diags.HasErrors() {
		diags = append(diags, &hcl.Diagnostic{Severity: hcl.DiagError, Summary: "No configuration files",
			Detail: fmt.Sprintf("No *.hcl files found in %s.", strings.Join(paths, ", "))})
	}
	envVars := envMap(env)
	root := &hcl.EvalContext{Functions: sharedFunctions(envVars)}
	parser := hclparse.NewParser()
	byType := map[string][]fileBlock{}
	var schemaDiags hcl.Diagnostics
	for _, name := range files {
		blocks, syntax, schema := parseFile(parser, name, root)
		diags = append(diags, syntax...)
		schemaDiags = append(schemaDiags, schema...)
		for _, fb := range blocks {
			byType[fb.block.Type] = append(byType[fb.block.Type], fb)
		}
	}
	cfg.Files = parser.Files()
	if diags.HasErrors() {
		// Syntax errors (or unreadable files): the rest would only be
		// follow-up noise of a half-parsed file.
		return cfg, diags
	}
	diags = append(diags, schemaDiags...)

	checkDuplicates(byType, &diags)
	var varObj cty.Value
	cfg.Variables, varObj = resolveVariables(byType[blockVariable], vars, envVars, &diags)
	root.Variables = map[string]cty.Value{"var": varObj}

	for _, fb := range byType[blockModel] {
		cfg.Models = append(cfg.Models, decodeModel(fb, &diags))
	}
	for _, fb := range byType[blockPlugin] {
		cfg.Plugins = append(cfg.Plugins, decodePlugin(fb, &diags))
	}
	for _, fb := range byType[blockAssembler] {
		cfg.Assemblers = append(cfg.Assemblers, decodeAssembler(fb, &diags))
	}
	for _, fb := range byType[blockContext] {
		cfg.Contexts = append(cfg.Contexts, decodeContext(fb, &diags))
	}
	for _, fb := range byType[blockAgent] {
		cfg.Agents = append(cfg.Agents, decodeAgent(fb, &diags))
	}
	if hosts := byType[blockHost]; len(hosts) > 0 {
		decodeHost(hosts[0], &cfg.Host, &diags)
	}
	cfg.Server = Server{Listen: DefaultListen, MaxRequestBytes: DefaultMaxRequestBytes,
		MaxAppendMessages: DefaultMaxAppendMessages, MaxAppendBytes: DefaultMaxAppendBytes, LockWait: DefaultLockWait, AdmissionWait: DefaultAdmissionWait,
		MemoryLimit: DefaultMemoryLimit, Inspector: true, TraceProtocol: "http/protobuf", TraceSampleRatio: 1}
	if servers := byType[blockServer]; len(servers) > 0 {
		decodeServer(servers[0], &cfg.Server, &diags)
	}
	for _, fb := range byType[blockSumm] {
		cfg.Summarizers = append(cfg.Summarizers, decodeSummarizer(fb, &diags))
	}
	for _, fb := range byType[blockUpstream] {
		cfg.Upstreams = append(cfg.Upstreams, decodeUpstream(fb, &diags))
	}
	callPath := map[string]bool{}
	for _, u := range cfg.Upstreams {
		callPath[u.Profile] = true
	}
	for _, c := range cfg.Contexts {
		if callPath[c.Name] && !c.Strategy.IsSet("type") {
			c.Strategy.Type = DefaultCallPathStrategy // nothing is compacted while the context fits
		}
		if !c.IsSet("plugins") {
			for _, p := range cfg.Plugins {
				c.Plugins = append(c.Plugins, p.Name)
			}
		}
	}
	diags = append(diags, cfg.validate()...)
	return cfg, diags
}

// expandPaths turns files and directories into a list of config files.
func expandPaths(paths []string, diags *hcl.Diagnostics) []string {
	var files []string
	for _, p := range paths {
		info, err := os.Stat(p)
		if err != nil {
			*diags = append(*diags, &hcl.Diagnostic{Severity: hcl.DiagError, Summary: "Cannot read configuration",
				Detail: err.Error()})
			continue
		}
		if !info.IsDir() {
			files = append(files, p)
			continue
		}
		entries, err := os.ReadDir(p)
		if err != nil {
			*diags = append(*diags, &hcl.Diagnostic{Severity: hcl.DiagError, Summary: "Cannot read configuration directory",
				Detail: err.Error()})
			continue
		}
		var names []string
		for _, e := range entries {
			if !e.IsDir() && (strings.HasSuffix(e.Name(), ".hcl") || strings.HasSuffix(e.Name(), ".hcl.json")) {
				names = append(names, filepath.Join(p, e.Name()))
			}
		}
		sort.Strings(names)
		files = append(files, names...)
	}
	return files
}

// parseFile parses one file (HCL native syntax, or HCL JSON for *.json) and
// returns its top-level blocks, each with the file's evaluation context,
// the syntax diagnostics and the diagnostics of the top-level schema
// (unknown block types, attributes at the top level).
func parseFile(parser *hclparse.Parser, name string, root *hcl.EvalContext) (blocks []fileBlock, syntax, schema hcl.Diagnostics) {
	var file *hcl.File
	if strings.HasSuffix(name, ".json") {
		file, syntax = parser.ParseJSONFile(name)
	} else {
		file, syntax = parser.ParseHCLFile(name)
	}
	if file == nil || file.Body == nil {
		return nil, syntax, nil
	}
	content, schema := file.Body.Content(rootSchema)
	dir := filepath.Dir(name)
	ctx := root.NewChild()
	ctx.Functions = map[string]function.Function{"file": fileFunc(dir)}
	for _, b := range content.Blocks {
		blocks = append(blocks, fileBlock{block: b, ctx: ctx, dir: dir})
	}
	return blocks, syntax, schema
}

// checkDuplicates reports blocks of one type that repeat a name (across
// all files) and keeps only the first of each; a second host block is a
// duplicate too.
func checkDuplicates(byType map[string][]fileBlock, diags *hcl.Diagnostics) {
	for _, typ := range sortedKeys(byType) {
		seen := map[string]hcl.Range{}
		kept := byType[typ][:0]
		for _, fb := range byType[typ] {
			name := ""
			if len(fb.block.Labels) > 0 {
				name = fb.block.Labels[0]
			}
			if first, dup := seen[name]; dup {
				what := fmt.Sprintf("%s %q", typ, name)
				if typ == blockHost || typ == blockServer {
					what = typ + " block"
				}
				*diags = append(*diags, &hcl.Diagnostic{
					Severity: hcl.DiagError,
					Summary:  "Duplicate " + what,
					Detail:   fmt.Sprintf("The %s was already declared at %s; names must be unique across all files.", what, first),
					Subject:  fb.block.DefRange.Ptr(),
				})
				continue
			}
			seen[name] = fb.block.DefRange
			kept = append(kept, fb)
		}
		byType[typ] = kept
	}
}
