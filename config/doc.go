// Package config loads ctxhost's HCL configuration: models, plugins,
// assemblers, context profiles, agents, the host block and variables.
//
// Load parses one or more files (a directory stands for its *.hcl and
// *.hcl.json files), merges them (a name declared twice, in any files, is
// an error), resolves variables (default < CTXHOST_VAR_name < -var) and
// validates everything at once: unknown blocks and attributes, wrong types,
// duplicate names, thresholds out of order, priorities out of range,
// unknown references, missing or non-executable plugin binaries and
// checksum mismatches, each reported as an hcl.Diagnostic with
// file:line:column. Load never starts a plugin. FormatDiagnostics renders
// diagnostics as Terraform does; DiagnosticLines gives one
// "file:line:col: summary" per diagnostic.
//
// Plugin `config` bodies are kept raw and decoded after the plugin has
// declared its schema, with DecodePluginConfig, which returns the JSON
// object for sdk.Configurer.Configure.
//
// Expressions may use var.NAME and the functions file(path) (relative to
// the declaring file), env(name[, default]), upper, lower, trimspace, join
// and format. Relative paths (plugin and assembler path, instruction_file,
// host.store) are resolved against the declaring file's directory.
//
// Every default is an exported constant (DefaultTimeout, DefaultTarget,
// ...) and listed, with the whole schema, in REFERENCE.md beside this file.
package config
