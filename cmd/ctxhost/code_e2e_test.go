package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestRunCodeExample replays the code example through `ctxhost run`: each
// fresh task gets the repository map focused on it and its code search
// results, the codebase docs and the task's own files, as fixed and
// dynamic parts of the budget; the task's own files are not repeated in
// the map or the search results.
func TestRunCodeExample(t *testing.T) {
	if testing.Short() {
		t.Skip("slow: make test runs it, make test-short (-short) leaves it out")
	}
	root := moduleRoot(t)
	res := ctxhost(t, "", "run", "-config", filepath.Join(root, "examples", "code.hcl"), "-var", "bin_dir="+binDir,
		"-var", "repo="+filepath.Join(root, "examples", "code", "shop"), "-var", "index_dir="+filepath.Join(t.TempDir(), "index"),
		"--format", "json", filepath.Join(root, "examples", "code-tasks.jsonl"))
	if res.code != 0 {
		t.Fatalf("ctxhost run exited %d\nstderr:\n%s", res.code, res.stderr)
	}
	var rec freshRunRecord
	if err := json.Unmarshal([]byte(res.stdout), &rec); err != nil {
		t.Fatalf("run record: %v\n%s", err, res.stdout)
	}
	if len(rec.Turns) != 2 {
		t.Fatalf("%d turns, want 2", len(rec.Turns))
	}
	for i, turn := range rec.Turns {
		f := turn.Fresh
		if f == nil || !f.Valid || !turn.Fits {
			t.Fatalf("turn %d: not a valid fresh turn: %+v", i+1, f)
		}
		kinds := map[string]string{}
		for _, e := range f.Breakdown {
			kinds[e.Name] = e.Kind
			if e.Tokens > e.Allocated {
				t.Errorf("turn %d: %s uses %d of %d tokens", i+1, e.Name, e.Tokens, e.Allocated)
			}
			if e.Name == "repo_map" && (e.Allocated != 600 || e.Tokens == 0) {
				t.Errorf("turn %d: repo map %+v, want a map within its fixed 600", i+1, e)
			}
		}
		if kinds["repo_map"] != "fixed" || kinds["codebase_docs"] != "fixed" || kinds["code_search"] != "dynamic" || kinds["relevant_files"] != "dynamic" {
			t.Errorf("turn %d: breakdown kinds %v", i+1, kinds)
		}
	}
	first := string(rec.Turns[0].Payload)
	if !strings.Contains(first, `shop/orders.py:\n  5: class OrderSchema(Schema)`) || !strings.Contains(first, "Codebase docs") {
		t.Errorf("task 1 lacks the map or the docs:\n%s", first)
	}
	if strings.Contains(first, "shop/pricing.py:") {
		t.Errorf("task 1's own file is in its map or search results:\n%s", first)
	}
	if !strings.Contains(first, `Relevant files of the task:\n\nshop/pricing.py (10 lines)`) {
		t.Errorf("task 1 lacks its own file whole:\n%s", first)
	}
	second := string(rec.Turns[1].Payload)
	if !strings.Contains(second, "shop/orders.py:14-18 (function place_order)") {
		t.Errorf("task 2 lacks the place_order search result:\n%s", second)
	}
}

// TestServeCodeExample builds a fresh coding task through `ctxhost serve`:
// the task arrives as a JSON input, and the prepared payload has the
// repository map, the codebase docs, code search results and the task's
// own file.
func TestServeCodeExample(t *testing.T) {
	if testing.Short() {
		t.Skip("slow: make test runs it, make test-short (-short) leaves it out")
	}
	root := moduleRoot(t)
	// serve keeps its sessions beside the configuration: a copy of it in
	// a temporary directory keeps them out of the repository
	dir := t.TempDir()
	hcl, err := os.ReadFile(filepath.Join(root, "examples", "code.hcl"))
	if err != nil {
		t.Fatal(err)
	}
	cfg := filepath.Join(dir, "code.hcl")
	if err := os.WriteFile(cfg, hcl, 0o600); err != nil {
		t.Fatal(err)
	}
	s := startServe(t, nil, "-config", cfg, "-var", "bin_dir="+binDir,
		"-var", "repo="+filepath.Join(root, "examples", "code", "shop"), "-var", "index_dir="+filepath.Join(t.TempDir(), "index"))
	info := mustCall(t, s.addr, "CreateSession", `{"sessionId":"code","profile":"coder"}`)
	if info["fresh"] != true {
		t.Fatalf("create: %v", info)
	}
	task := `{"name":"Reject empty orders","description":"place_order accepts an empty items list","files":["shop/orders.py"]}`
	b, _ := json.Marshal(map[string]string{"sessionId": "code", "text": "TEXT_INPUT", "value": task})
	mustCall(t, s.addr, "SetText", string(b))
	p := mustCall(t, s.addr, "Prepare", `{"sessionId":"code"}`)
	payload, _ := p["payload"].(string)
	for _, want := range []string{"Repository map:", "Codebase docs", "Code search results for", `Relevant files of the task:\n\nshop/orders.py (18 lines)`, "Task task-1: Reject empty orders"} {
		if !strings.Contains(payload, want) {
			t.Errorf("payload lacks %q:\n%s", want, payload)
		}
	}
}
