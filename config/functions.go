package config

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
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
			f, err := openConfined(dir, path)
			if err != nil {
				return cty.NilVal, err
			}
			defer f.Close()
			text, err := readOpenTextFile(f)
			if err != nil {
				return cty.NilVal, fmt.Errorf("file %q: %w", path, err)
			}
			return cty.StringVal(text), nil
		},
	})
}

// openConfined opens path for file(). An absolute path is opened as
// given; a relative one is opened through an os.Root on dir, so that
// neither "..", nor a symbolic link, nor a link swapped in between a check
// and the open can reach outside dir: the check and the open are one
// operation.
func openConfined(dir, path string) (*os.File, error) {
	if path == "" {
		return nil, fmt.Errorf("file: empty path")
	}
	if filepath.IsAbs(path) {
		f, err := openNonBlocking(nil, path)
		if err != nil {
			return nil, fmt.Errorf("file %q: %w", path, err)
		}
		return f, nil
	}
	root, err := os.OpenRoot(dir)
	if err != nil {
		return nil, fmt.Errorf("file %q: open the configuration's directory: %w", path, err)
	}
	defer root.Close()
	f, err := openNonBlocking(root, path)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) || errors.Is(err, fs.ErrPermission) {
			return nil, fmt.Errorf("file %q: %w", path, err)
		}
		return nil, fmt.Errorf("file %q: a relative path must stay inside the configuration's directory %s (give an absolute path to read elsewhere): %w", path, dir, err)
	}
	return f, nil
}

// openNonBlocking opens a file for reading without blocking on a FIFO or a
// device (they are refused once open, by readOpenTextFile); root nil: the
// path as given.
func openNonBlocking(root *os.Root, path string) (*os.File, error) {
	flags := os.O_RDONLY | syscall.O_NONBLOCK
	if root == nil {
		return os.OpenFile(path, flags, 0)
	}
	return root.OpenFile(path, flags, 0)
}

// readTextFile reads a regular UTF-8 file of at most MaxFileBytes: a
// device, a FIFO or a directory is refused before anything is read.
func readTextFile(path string) (string, error) {
	f, err := openNonBlocking(nil, path)
	if err != nil {
		return "", err
	}
	defer f.Close()
	return readOpenTextFile(f)
}

// readOpenTextFile reads an open file that must be regular, UTF-8 and at
// most MaxFileBytes; the checks are on the open file, so nothing can swap
// the file between them and the read.
func readOpenTextFile(f *os.File) (string, error) {
	st, err := f.Stat()
	if err != nil {
		return "", err
	}
	if !st.Mode().IsRegular() {
		return "", fmt.Errorf("not a regular file (%s)", st.Mode().Type())
	}
	if st.Size() > MaxFileBytes {
		return "", fmt.Errorf("%d bytes, more than the %d allowed", st.Size(), MaxFileBytes)
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
