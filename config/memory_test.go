package config

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

const memoryModel = `
model "m" {
  context_window = 8000
}
`

func TestMemoryBlock(t *testing.T) {
	cfg := loadString(t, memoryModel+`
context "coder" {
  model = "m"
  memory {
    agent  = "coder-agent"
    groups = ["team-a", "team-b"]
    block "persona" {
      scope       = "agent"
      description = "who you are"
      value       = "A careful engineer."
      limit       = 200
      read_only   = true
    }
    block "notes" {}
    block "standards" {
      scope = "group"
      group = "team-a"
      value = "Run the tests."
      unit  = "tokens"
      limit = 50
    }
  }
}
`)
	m := cfg.Contexts[0].Memory
	if m.Agent != "coder-agent" || strings.Join(m.Groups, ",") != "team-a,team-b" || len(m.Blocks) != 3 {
		t.Fatalf("memory %+v", m)
	}
	p, n, s := m.Blocks[0], m.Blocks[1], m.Blocks[2]
	if p.Label != "persona" || p.Scope != "agent" || !p.ReadOnly || p.Limit != 200 || p.Unit != "chars" || p.Description != "who you are" {
		t.Errorf("persona %+v", p)
	}
	if n.Scope != "session" || n.Limit != DefaultBlockLimit || n.Unit != "chars" || n.Value != "" {
		t.Errorf("notes defaults %+v", n)
	}
	if s.Scope != "group" || s.Group != "team-a" || s.Unit != "tokens" || s.Limit != 50 {
		t.Errorf("standards %+v", s)
	}
}

func TestMemoryBlockErrors(t *testing.T) {
	for name, tc := range map[string]struct{ body, want string }{
		"scope":      {`block "a" { scope = "org" }`, "scope"},
		"group":      {`block "a" { scope = "group" }`, "Missing or invalid group"},
		"stray":      {`block "a" { group = "g" }`, "group without"},
		"label":      {`block "1a" {}`, "Invalid block label"},
		"unit":       {`block "a" { unit = "bytes" }`, "unit"},
		"limit":      {`block "a" { limit = 0 }`, "Invalid limit"},
		"over":       {"block \"a\" {\n value = \"too long\"\n limit = 3\n}", "over its limit of 3 chars"},
		"duplicate":  {`block "a" {}` + "\n" + `block "a" {}`, "Duplicate memory block"},
		"agent name": {`agent = "a b"`, "Invalid agent name"},
		"group name": {`groups = ["ok", "not ok"]`, "Invalid group name"},
	} {
		t.Run(name, func(t *testing.T) {
			err := loadError(t, memoryModel+"context \"c\" {\n  model = \"m\"\n  memory {\n"+tc.body+"\n  }\n}\n")
			if !strings.Contains(err, tc.want) {
				t.Errorf("error %q; want one containing %q", err, tc.want)
			}
		})
	}
}

// loadHCL loads src as one file: the configuration and its diagnostics
// (each as "range: summary: detail").
func loadHCL(t *testing.T, src string) (*Config, string) {
	t.Helper()
	p := filepath.Join(t.TempDir(), "memory.hcl")
	if err := os.WriteFile(p, []byte(src), 0o600); err != nil {
		t.Fatal(err)
	}
	c, diags := Load([]string{p}, nil, nil)
	var msgs []string
	for _, d := range diags {
		msgs = append(msgs, d.Subject.String()+": "+d.Summary+": "+d.Detail)
	}
	return c, strings.Join(msgs, "\n")
}

func loadString(t *testing.T, src string) *Config {
	t.Helper()
	c, errs := loadHCL(t, src)
	if errs != "" {
		t.Fatal(errs)
	}
	return c
}

func loadError(t *testing.T, src string) string {
	t.Helper()
	_, errs := loadHCL(t, src)
	if errs == "" {
		t.Fatal("loaded without an error")
	}
	return errs
}
