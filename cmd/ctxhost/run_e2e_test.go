package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"cloud.google.com/go/ai/generativelanguage/apiv1beta/generativelanguagepb"
	"github.com/ctxhost/ctxhost/internal/shareddata"
	"google.golang.org/protobuf/encoding/protojson"
)

// replayJSON runs `ctxhost run --format json` and decodes the record.
func replayJSON(t *testing.T, args ...string) runRecord {
	t.Helper()
	res := ctxhost(t, "", append([]string{"run", "-format", "json"}, args...)...)
	if res.code != 0 {
		t.Fatalf("ctxhost run exited %d\nstderr:\n%s", res.code, res.stderr)
	}
	var rec runRecord
	if err := json.Unmarshal([]byte(res.stdout), &rec); err != nil {
		t.Fatalf("decode run record: %v", err)
	}
	if len(rec.Turns) == 0 {
		t.Fatal("run record has no turns")
	}
	return rec
}

func checkEveryTurnFits(t *testing.T, rec runRecord) {
	t.Helper()
	for _, turn := range rec.Turns {
		b := turn.Budget
		if !turn.Fits || b.Used > b.Available || b.CalibratedUsed > b.Available {
			t.Errorf("turn %d (line %d): used %d (calibrated %d) of %d available", turn.Turn, turn.Line, b.Used, b.CalibratedUsed, b.Available)
		}
	}
}

func TestRunExampleGemini(t *testing.T) {
	root := moduleRoot(t)
	transcript := filepath.Join(root, "examples", "coding-session.jsonl")
	rec := replayJSON(t, exampleArgs(t, transcript)...)
	checkEveryTurnFits(t, rec)
	compacted, freed := 0, 0
	for _, turn := range rec.Turns {
		if turn.Compaction != nil {
			compacted++
			freed += turn.Compaction.Freed
		}
	}
	if compacted == 0 || freed == 0 {
		t.Errorf("no compaction in %d turns (compacted %d, freed %d); the example budget should force it", len(rec.Turns), compacted, freed)
	}
	last := rec.Turns[len(rec.Turns)-1]
	var req generativelanguagepb.GenerateContentRequest
	if err := (protojson.UnmarshalOptions{}).Unmarshal(last.Payload, &req); err != nil {
		t.Fatalf("final payload is not a strict GenerateContentRequest: %v", err)
	}
	if len(req.GetContents()) == 0 || req.GetSystemInstruction() == nil {
		t.Errorf("Gemini request lacks contents or system instruction: %d contents", len(req.GetContents()))
	}
}

func TestRunExampleTextAndPayloadFile(t *testing.T) {
	root := moduleRoot(t)
	out := filepath.Join(t.TempDir(), "payload.json")
	res := ctxhost(t, "", append([]string{"run"}, exampleArgs(t, "-o", out, filepath.Join(root, "examples", "coding-session.jsonl"))...)...)
	if res.code != 0 {
		t.Fatalf("exit %d\n%s", res.code, res.stderr)
	}
	for _, want := range []string{"turn 1 (line", "conversation_history", "█", "compaction:", "asked", "claimed", "freed", "action"} {
		if !strings.Contains(res.stdout, want) {
			t.Errorf("text output lacks %q", want)
		}
	}
	data, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	var req generativelanguagepb.GenerateContentRequest
	if err := protojson.Unmarshal(data, &req); err != nil {
		t.Errorf("-o payload is not a GenerateContentRequest: %v", err)
	}
}

func TestRunExampleClaude(t *testing.T) {
	root := moduleRoot(t)
	rec := replayJSON(t, exampleArgs(t, "-var", "assembler=claude", filepath.Join(root, "examples", "coding-session.jsonl"))...)
	checkEveryTurnFits(t, rec)
	var body struct {
		Model     string            `json:"model"`
		MaxTokens int               `json:"max_tokens"`
		System    json.RawMessage   `json:"system"`
		Messages  []json.RawMessage `json:"messages"`
		Contents  json.RawMessage   `json:"contents"`
	}
	if err := json.Unmarshal(rec.Turns[len(rec.Turns)-1].Payload, &body); err != nil {
		t.Fatalf("decode Claude payload: %v", err)
	}
	if body.Model == "" || body.MaxTokens == 0 || len(body.Messages) == 0 || body.System == nil || body.Contents != nil {
		t.Errorf("payload is not a Claude Messages body: model %q, max_tokens %d, %d messages, system %s, contents %s",
			body.Model, body.MaxTokens, len(body.Messages), body.System, body.Contents)
	}
}

func TestRunTrajectories(t *testing.T) {
	if testing.Short() {
		t.Skip("slow: make test runs it, make test-short (-short) leaves it out")
	}
	trajs := shareddata.RequireTrajectories(t)
	root := moduleRoot(t)
	for _, traj := range trajs {
		t.Run(filepath.Base(traj), func(t *testing.T) {
			rec := replayJSON(t, "-config", filepath.Join(root, "examples", "replay.hcl"), "-var", "bin_dir="+binDir, traj)
			if rec.Format != "traj" {
				t.Errorf("detected format %q, want traj", rec.Format)
			}
			checkEveryTurnFits(t, rec)
		})
	}
}
