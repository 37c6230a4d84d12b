package config

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
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

// MaxFileBytes is the largest file file() and instruction_file read.
const MaxFileBytes = 4 << 20

// fileFunc is file(path): the content of a UTF-8 text file, a relative path
// being resolved against dir (the directory of the calling config file)
// and confined to it; see readTextFile.
func fileFunc(dir string) function.Function {
	return function.New(&function.Spec{
		Description: "Reads a UTF-8 text file (at most 4 MiB), relative to the directory of the configuration file.",
		Params:      []function.Parameter{{Name: "path", Type: cty.String}},
		Type:        function.StaticReturnType(cty.String),
		Impl: func(args []cty.Value, _ cty.Type) (cty.Value, error) {
			path := args[0].AsString()
			full, err := confinedPath(dir, path)
			if err != nil {
				return cty.NilVal, err
			}
			text, err := readTextFile(full)
			if err != nil {
				return cty.NilVal, fmt.Errorf("file %q: %w", path, err)
			}
			return cty.StringVal(text), nil
		},
	})
}

// confinedPath resolves path against dir. An absolute path is taken as
// given; a relative one must stay inside dir, symbolic links resolved.
func confinedPath(dir, path string) (string, error) {
	if path == "" {
		return "", fmt.Errorf("file: empty path")
	}
	if filepath.IsAbs(path) {
		return path, nil
	}
	full := filepath.Join(dir, path)
	inside := func(base, p string) bool {
		rel, err := filepath.Rel(base, p)
		return err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator))
	}
	escape := fmt.Errorf("file %q: a relative path must stay inside the configuration's directory %s (give an absolute path to read elsewhere)", path, dir)
	if !inside(dir, full) {
		return "", escape
	}
	realDir, err1 := filepath.EvalSymlinks(dir)
	realFull, err2 := filepath.EvalSymlinks(full)
	if err1 == nil && err2 == nil && !inside(realDir, realFull) {
		return "", escape
	}
	return full, nil
}

// readTextFile reads a regular UTF-8 file of at most MaxFileBytes: a
// device, a FIFO or a directory is refused before it is read.
func readTextFile(path string) (string, error) {
	st, err := os.Stat(path)
	if err != nil {
		return "", err
	}
	if !st.Mode().IsRegular() {
		return "", fmt.Errorf("not a regular file (%s)", st.Mode().Type())
	}
	if st.Size() > MaxFileBytes {
		return "", fmt.Errorf("%d bytes, more than the %d allowed", st.Size(), MaxFileBytes)
	}
	f, err := os.Open(path)
	if err != nil {
		return "", err
	}
	defer f.Close()
	if st, err := f.Stat(); err != nil || !st.Mode().IsRegular() {
		return "", fmt.Errorf("not a regular file")
	}
	data, err := io.ReadAll(io.LimitReader(f, MaxFileBytes+1))
	if err != nil {
		return "", err
	}
	if len(data) > MaxFileBytes {
		return "", fmt.Errorf("more than the %d bytes allowed", MaxFileBytes)
	}
	if !utf8.Valid(data) {
		return "", fmt.Errorf("not valid UTF-8")
	}
	return string(data), nil
}

// resolvePath joins a relative path to dir; absolute paths are kept. The
// result always names a file (it has a separator: "./x", not "x"), so a
// plugin binary beside a configuration given as a bare file name is run
// from there, never looked up in $PATH.
func resolvePath(dir, path string) string {
	if path == "" || filepath.IsAbs(path) {
		return path
	}
	out := filepath.Join(dir, path)
	if !strings.ContainsRune(out, filepath.Separator) {
		out = "." + string(filepath.Separator) + out
	}
	return out
}

// resolveStore resolves the path of a store spec against dir: a plain
// path, or the path after "sqlite:" or "file:"; a database URL
// (postgres://, postgresql://) is left as it is.
func resolveStore(dir, spec string) string {
	lower := strings.ToLower(spec)
	if strings.HasPrefix(lower, "postgres://") || strings.HasPrefix(lower, "postgresql://") {
		return spec
	}
	prefix := ""
	for _, p := range []string{"sqlite:", "file:"} {
		if rest, ok := strings.CutPrefix(spec, p); ok {
			prefix, spec = p, rest
			break
		}
	}
	out := resolvePath(dir, spec)
	if strings.HasSuffix(spec, "/") && !strings.HasSuffix(out, "/") {
		out += "/" // a trailing slash names a directory of files
	}
	return prefix + out
}

// readInstructionFile reads an agent's instruction file, reporting a
// failure at the instruction_file attribute.
func readInstructionFile(r *attrReader, path string) string {
	text, err := readTextFile(path)
	if err != nil {
		r.errorAt("instruction_file", "Unreadable instruction file", fmt.Sprintf("Cannot read %s: %v.", path, err))
		return ""
	}
	return text
}
