package config

import (
	"fmt"
	"os"
	"path/filepath"
	"unicode/utf8"

	"github.com/zclconf/go-cty/cty"
	"github.com/zclconf/go-cty/cty/function"
	"github.com/zclconf/go-cty/cty/function/stdlib"
)

// sharedFunctions are the HCL functions available in every file; file() is
// added per file because it resolves paths against the file's directory.
func sharedFunctions(env map[string]string) map[string]function.Function {
	return map[string]function.Function{
		"env":       envFunc(env),
		"upper":     stdlib.UpperFunc,
		"lower":     stdlib.LowerFunc,
		"trimspace": stdlib.TrimSpaceFunc,
		"join":      stdlib.JoinFunc,
		"format":    stdlib.FormatFunc,
	}
}

// envFunc is env(name[, default]): the value of an environment variable; an
// unset variable without a default is an error, so a typo is not silently
// an empty string.
func envFunc(env map[string]string) function.Function {
	return function.New(&function.Spec{
		Description: "Returns the value of an environment variable, or the default when it is unset.",
		Params:      []function.Parameter{{Name: "name", Type: cty.String}},
		VarParam:    &function.Parameter{Name: "default", Type: cty.String},
		Type:        function.StaticReturnType(cty.String),
		Impl: func(args []cty.Value, _ cty.Type) (cty.Value, error) {
			if len(args) > 2 {
				return cty.NilVal, fmt.Errorf("env takes a name and at most one default")
			}
			name := args[0].AsString()
			if v, ok := env[name]; ok {
				return cty.StringVal(v), nil
			}
			if len(args) == 2 {
				return args[1], nil
			}
			return cty.NilVal, fmt.Errorf("environment variable %q is not set (use env(%q, \"default\") for a fallback)", name, name)
		},
	})
}

// fileFunc is file(path): the content of a UTF-8 text file, a relative path
// being resolved against dir (the directory of the calling config file).
func fileFunc(dir string) function.Function {
	return function.New(&function.Spec{
		Description: "Reads a UTF-8 text file, relative to the directory of the configuration file.",
		Params:      []function.Parameter{{Name: "path", Type: cty.String}},
		Type:        function.StaticReturnType(cty.String),
		Impl: func(args []cty.Value, _ cty.Type) (cty.Value, error) {
			data, err := os.ReadFile(resolvePath(dir, args[0].AsString()))
			if err != nil {
				return cty.NilVal, fmt.Errorf("read file: %w", err)
			}
			if !utf8.Valid(data) {
				return cty.NilVal, fmt.Errorf("file %q is not valid UTF-8", args[0].AsString())
			}
			return cty.StringVal(string(data)), nil
		},
	})
}

// resolvePath joins a relative path to dir; absolute paths are kept.
func resolvePath(dir, path string) string {
	if path == "" || filepath.IsAbs(path) {
		return path
	}
	return filepath.Join(dir, path)
}

// readInstructionFile reads an agent's instruction file, reporting a
// failure at the instruction_file attribute.
func readInstructionFile(r *attrReader, path string) string {
	data, err := os.ReadFile(path)
	if err == nil && !utf8.Valid(data) {
		err = fmt.Errorf("not valid UTF-8")
	}
	if err != nil {
		r.errorAt("instruction_file", "Unreadable instruction file", fmt.Sprintf("Cannot read %s: %v.", path, err))
		return ""
	}
	return string(data)
}
