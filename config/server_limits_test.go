package config

import (
	"os"
	"path/filepath"
	"testing"
	"time"
)

func TestServerLimits(t *testing.T) {
	load := func(t *testing.T, body string) (Server, []string) {
		t.Helper()
		path := filepath.Join(t.TempDir(), "c.hcl")
		hcl := "model \"m\" { context_window = 8000 }\ncontext \"c\" { model = \"m\" }\n" + body
		if err := os.WriteFile(path, []byte(hcl), 0o600); err != nil {
			t.Fatal(err)
		}
		cfg, diags := Load([]string{path}, nil, nil)
		return cfg.Server, DiagnosticLines(diags)
	}
	s, diags := load(t, "")
	if len(diags) != 0 || s.MaxAppendMessages != DefaultMaxAppendMessages || s.MaxAppendBytes != DefaultMaxAppendBytes || s.LockWait != DefaultLockWait {
		t.Fatalf("defaults: %+v %v", s, diags)
	}
	s, diags = load(t, "server {\n  max_append_messages = 50\n  max_append_bytes = 65536\n  lock_wait = \"2s\"\n}\n")
	if len(diags) != 0 || s.MaxAppendMessages != 50 || s.MaxAppendBytes != 65536 || s.LockWait != 2*time.Second {
		t.Fatalf("set: %+v %v", s, diags)
	}
	if _, diags = load(t, "server {\n  max_append_messages = 0\n  lock_wait = \"soon\"\n}\n"); len(diags) != 2 {
		t.Fatalf("invalid limits: %v", diags)
	}
}

func TestServerMemoryLimit(t *testing.T) {
	for _, c := range []struct {
		body  string
		want  int
		diags int
	}{
		{"", DefaultMemoryLimit, 0},
		{"server {\n  memory_limit = 0\n}\n", 0, 0},
		{"server {\n  memory_limit = 536870912\n}\n", 512 << 20, 0},
		{"server {\n  memory_limit = 1000\n}\n", 1000, 1},
	} {
		path := filepath.Join(t.TempDir(), "c.hcl")
		hcl := "model \"m\" { context_window = 8000 }\ncontext \"c\" { model = \"m\" }\n" + c.body
		if err := os.WriteFile(path, []byte(hcl), 0o600); err != nil {
			t.Fatal(err)
		}
		cfg, diags := Load([]string{path}, nil, nil)
		if lines := DiagnosticLines(diags); cfg.Server.MemoryLimit != c.want || len(lines) != c.diags {
			t.Errorf("%q: memory_limit %d, diagnostics %v; want %d and %d diagnostics", c.body, cfg.Server.MemoryLimit, lines, c.want, c.diags)
		}
	}
}
