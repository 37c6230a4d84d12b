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
