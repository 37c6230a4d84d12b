package engine

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/ctxhost/ctxhost/config"
	"github.com/ctxhost/ctxhost/host/memory"
	"github.com/ctxhost/ctxhost/sdk"
)

const memoryHCL = `
model "m" { context_window = 10000 }
assembler "asm" { builtin = %q }
context "c" {
  model         = "m"
  assembler     = "asm"
  system_prompt = "be brief"
  memory {
    groups = ["team"]
    tools  = true
    block "persona" {
      scope     = "agent"
      value     = "I am the coder agent."
      read_only = true
    }
    block "notes" {
      description = "what this session learned"
      limit       = 40
    }
    block "standards" {
      scope = "group"
      group = "team"
      value = "Run go vet before every commit."
      unit  = "tokens"
      limit = 30
    }
  }
}
%s
`

func startMemory(t *testing.T, asm, extra string, opts Options) *Engine {
	t.Helper()
	opts.Logger = NewLogger(config.Host{LogLevel: "error"}, io.Discard)
	e, err := Start(context.Background(), load(t, fmt.Sprintf(memoryHCL, asm, extra)), opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(e.Close)
	return e
}

// systemField is the provider's system field of an api payload.
func systemField(t *testing.T, asm string, payload []byte) string {
	t.Helper()
	var p map[string]json.RawMessage
	if err := json.Unmarshal(payload, &p); err != nil {
		t.Fatalf("%s payload: %v", asm, err)
	}
	switch asm {
	case "claude":
		return string(p["system"])
	case "gemini":
		return string(p["systemInstruction"])
	default:
		var msgs []struct {
			Role    string          `json:"role"`
			Content json.RawMessage `json:"content"`
		}
		if err := json.Unmarshal(p["messages"], &msgs); err != nil || len(msgs) == 0 {
			t.Fatalf("codex payload messages: %v", err)
		}
		if msgs[0].Role != "system" && msgs[0].Role != "developer" {
			t.Fatalf("codex payload's first message is %q", msgs[0].Role)
		}
		return string(msgs[0].Content)
	}
}

// TestMemoryInEveryAssembler: the HCL blocks are written for the
// profile's agent, group and each new session, and every first-party
// assembler renders them in its provider's system field.
func TestMemoryInEveryAssembler(t *testing.T) {
	for _, asm := range []string{"claude", "codex", "gemini"} {
		t.Run(asm, func(t *testing.T) {
			e := startMemory(t, asm, "", Options{})
			ctx := context.Background()
			s, err := e.NewSession("s1")
			if err != nil {
				t.Fatal(err)
			}
			if _, err := e.EditMemoryBlock(ctx, MemoryScope{Kind: memory.KindSession, Name: "s1"}, "notes", AppendEdit("the tests live in ./pkg", true), 0); err != nil {
				t.Fatal(err)
			}
			if _, err := s.AddMessage(sdk.Message{Role: sdk.RoleUser, Content: "hello"}); err != nil {
				t.Fatal(err)
			}
			turn, err := s.Prepare(ctx, "")
			if err != nil {
				t.Fatal(err)
			}
			sys := systemField(t, asm, turn.Prepared.Payload)
			for _, want := range []string{"be brief", "I am the coder agent.", "Run go vet before every commit.", "the tests live in ./pkg", "scope=session:s1", "scope=agent:c", "scope=group:team"} {
				if !strings.Contains(sys, want) {
					t.Errorf("system field lacks %q: %s", want, sys)
				}
			}
		})
	}
}

// TestMemoryWrites: limits refuse naming them, read-only blocks refuse
// the model, versions move on and are kept, concurrent appends are all
// kept, and the session's agent and groups are saved in its record.
func TestMemoryWrites(t *testing.T) {
	e := startMemory(t, "claude", "", Options{})
	ctx := context.Background()
	if _, err := e.NewSession("s1"); err != nil {
		t.Fatal(err)
	}
	notes := MemoryScope{Kind: memory.KindSession, Name: "s1"}
	_, err := e.EditMemoryBlock(ctx, notes, "notes", AppendEdit(strings.Repeat("x", 41), true), 0)
	if !errors.Is(err, ErrBlockOverLimit) || !strings.Contains(err.Error(), "limit of 40 chars") {
		t.Errorf("a write over the limit: %v; want ErrBlockOverLimit naming 40 chars", err)
	}
	if b, _ := e.MemoryBlock(ctx, notes, "notes"); b.Value != "" || b.Version != 1 {
		t.Errorf("the refused write changed the block: %+v", b)
	}
	persona := MemoryScope{Kind: memory.KindAgent, Name: "c"}
	if _, err := e.EditMemoryBlock(ctx, persona, "persona", AppendEdit("more", true), 0); !errors.Is(err, ErrBlockReadOnly) {
		t.Errorf("the model's edit of a read-only block: %v; want ErrBlockReadOnly", err)
	}
	if b, err := e.EditMemoryBlock(ctx, persona, "persona", ReplaceEdit("coder", "senior coder", false), 0); err != nil || b.Version != 2 {
		t.Errorf("an operator's edit of a read-only block: %+v, %v", b, err)
	}
	if _, err := e.PutMemoryBlock(ctx, MemoryBlock{Scope: persona, Label: "persona", Value: "stale"}, 1); !errors.Is(err, ErrVersionConflict) {
		t.Errorf("a write over a stale version: %v; want ErrVersionConflict", err)
	}
	vs, err := e.MemoryBlockVersions(ctx, persona, "persona")
	if err != nil || len(vs) != 2 || vs[0].Value != "I am the coder agent." || vs[1].Value != "I am the senior coder agent." {
		t.Errorf("versions %+v, %v", vs, err)
	}

	// Concurrent appends: each reads again after losing a race.
	group := MemoryScope{Kind: memory.KindGroup, Name: "log"}
	if _, err := e.PutMemoryBlock(ctx, MemoryBlock{Scope: group, Label: "log", Limit: 1000}, 0); err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	for i := range 6 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if _, err := e.EditMemoryBlock(ctx, group, "log", AppendEdit(fmt.Sprintf("entry %d", i), true), 0); err != nil {
				t.Error(err)
			}
		}()
	}
	wg.Wait()
	b, err := e.MemoryBlock(ctx, group, "log")
	if err != nil || len(strings.Split(b.Value, "\n")) != 6 || b.Version != 7 {
		t.Errorf("after 6 concurrent appends: %q version %d, %v", b.Value, b.Version, err)
	}
	if err := e.DeleteMemoryBlock(ctx, group, "log", 0); err != nil {
		t.Fatal(err)
	}
	if _, err := e.MemoryBlock(ctx, group, "log"); !errors.Is(err, ErrBlockNotFound) {
		t.Errorf("a deleted block: %v", err)
	}
}

// TestMemoryMembershipStored: a session's agent and groups are kept in
// its record through a store; reopened, it sees the same blocks.
func TestMemoryMembershipStored(t *testing.T) {
	dir := t.TempDir()
	store := fmt.Sprintf("host { store = %q }", filepath.Join(dir, "state.db"))
	ctx := context.Background()
	e := startMemory(t, "claude", store, Options{})
	s, err := e.CreateSession("s1", CreateOptions{Record: Record{Agent: "reviewer", Groups: []string{"ops"}}})
	if err != nil {
		t.Fatal(err)
	}
	if got := fmt.Sprint(s.MemoryScopes()); got != "[session:s1 agent:reviewer group:ops group:team]" {
		t.Errorf("scopes %s", got)
	}
	if _, err := e.MemoryBlock(ctx, MemoryScope{Kind: memory.KindAgent, Name: "reviewer"}, "persona"); err != nil {
		t.Errorf("the HCL agent block was not written for the session's agent: %v", err)
	}
	if _, err := e.PutMemoryBlock(ctx, MemoryBlock{Scope: MemoryScope{Kind: memory.KindGroup, Name: "ops"}, Label: "oncall", Value: "page Ana"}, 0); err != nil {
		t.Fatal(err)
	}
	e.Close()

	e2 := startMemory(t, "claude", store, Options{})
	s2, restored, err := e2.OpenSession(ctx, "s1")
	if err != nil || !restored {
		t.Fatalf("reopen: %v %v", restored, err)
	}
	turn, err := s2.Prepare(ctx, "")
	if err != nil {
		t.Fatal(err)
	}
	if sys := systemField(t, "claude", turn.Prepared.Payload); !strings.Contains(sys, "page Ana") || !strings.Contains(sys, "scope=agent:reviewer") {
		t.Errorf("the reopened session does not see its groups' and agent's blocks: %s", sys)
	}
	if err := s2.SetMembership(ctx, "", nil); err != nil {
		t.Fatal(err)
	}
	turn, err = s2.Prepare(ctx, "")
	if err != nil {
		t.Fatal(err)
	}
	if sys := systemField(t, "claude", turn.Prepared.Payload); strings.Contains(sys, "page Ana") || !strings.Contains(sys, "scope=agent:c") {
		t.Errorf("after leaving the group: %s", sys)
	}
}

// TestRunOwnTools: the memory tools ride every request of a profile
// that asks for them, and RunTool answers them (and the recall tool) on
// the blocks the session sees, refusals as results the model reads.
func TestRunOwnTools(t *testing.T) {
	e := startMemory(t, "claude", "", Options{})
	ctx := context.Background()
	s, err := e.NewSession("s1")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.AddMessage(sdk.Message{Role: sdk.RoleUser, Content: "the build id is 7f3a"}); err != nil {
		t.Fatal(err)
	}
	turn, err := s.Prepare(ctx, "")
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{MemoryViewTool, MemoryAppendTool, MemoryReplaceTool} {
		if !strings.Contains(string(turn.Prepared.Payload), `"name":"`+name+`"`) {
			t.Errorf("the payload lacks the tool %s", name)
		}
	}
	run := func(name, args string) ToolResult {
		t.Helper()
		r, err := s.RunTool(ctx, name, json.RawMessage(args))
		if err != nil {
			t.Fatalf("%s %s: %v", name, args, err)
		}
		return r
	}
	if r := run(MemoryAppendTool, `{"label":"notes","text":"tests live in ./pkg"}`); r.IsError || !strings.Contains(r.Text, "version 2") {
		t.Errorf("append: %+v", r)
	}
	if r := run(MemoryReplaceTool, `{"label":"notes","old_text":"./pkg","new_text":"./internal"}`); r.IsError {
		t.Errorf("replace: %+v", r)
	}
	if r := run(MemoryViewTool, `{"label":"notes"}`); r.IsError || !strings.Contains(r.Text, "tests live in ./internal") || !strings.Contains(r.Text, "session:s1") {
		t.Errorf("view: %+v", r)
	}
	if r := run(MemoryAppendTool, `{"label":"notes","text":"`+strings.Repeat("y", 40)+`"}`); !r.IsError || !strings.Contains(r.Text, "limit of 40 chars") {
		t.Errorf("append over the limit: %+v; want a refusal naming the limit", r)
	}
	if r := run(MemoryAppendTool, `{"label":"persona","text":"x"}`); !r.IsError || !strings.Contains(r.Text, "read-only") {
		t.Errorf("append to a read-only block: %+v", r)
	}
	if r := run(MemoryAppendTool, `{"label":"nope","text":"x"}`); !r.IsError || !strings.Contains(r.Text, "notes, persona, standards") {
		t.Errorf("an unknown label: %+v", r)
	}
	if r := run(MemoryViewTool, `not json`); !r.IsError {
		t.Errorf("bad arguments: %+v", r)
	}
	if r := run(sdk.RecallToolName, `{"query":"build id"}`); r.IsError || !strings.Contains(r.Text, "7f3a") {
		t.Errorf("recall: %+v", r)
	}
	next, err := s.Prepare(ctx, "")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(systemField(t, "claude", next.Prepared.Payload), "tests live in ./internal") {
		t.Error("the model's edit is not in the next prepare")
	}
	if _, err := s.RunTool(ctx, "bash", nil); err == nil {
		t.Error("RunTool answered a tool that is not ctxhost's")
	}
}

// TestAnswerToolCallsRecordsBothTurns: AnswerToolCalls runs the calls of
// ctxhost's tools in a model's turn, leaves the others, and records the
// turn (marked with the calls it answered, and hidden when asked) then a
// result per call answered, in order, in one save.
func TestAnswerToolCallsRecordsBothTurns(t *testing.T) {
	e := startMemory(t, "claude", "", Options{})
	ctx := context.Background()
	s, err := e.NewSession("s1")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.AddMessage(sdk.Message{Role: sdk.RoleUser, Content: "note the test dir"}); err != nil {
		t.Fatal(err)
	}
	turn := sdk.Message{Role: sdk.RoleAssistant, Content: "Noting it.", ToolCalls: []sdk.ToolCall{
		{ID: "c1", Name: MemoryAppendTool, Arguments: `{"label":"notes","text":"tests in ./pkg"}`},
		{ID: "c2", Name: "bash", Arguments: `{"cmd":"ls"}`},
		{ID: "c3", Name: MemoryAppendTool, Arguments: `{"label":"persona","text":"x"}`},
	}}
	added, res, err := s.AnswerToolCalls(ctx, turn, nil, true)
	if err != nil {
		t.Fatal(err)
	}
	if len(res) != 2 || res[0].IsError || !res[1].IsError {
		t.Fatalf("results %+v: want the append answered, the read-only block refused, bash left", res)
	}
	if got := OwnCallIDs(&added); strings.Join(got, ",") != "c1,c3" || added.Metadata[MetaHidden] != "true" {
		t.Errorf("recorded turn's metadata %v", added.Metadata)
	}
	msgs := s.Messages()
	if len(msgs) != 4 {
		t.Fatalf("history of %d messages, want 4 (task, turn, two results)", len(msgs))
	}
	for i, id := range []string{"c1", "c3"} {
		m := msgs[2+i]
		if m.Role != sdk.RoleTool || m.ToolCallID != id || m.Metadata[MetaOwnResult] != "true" || (m.Metadata[sdk.MetaToolError] == "true") != (i == 1) {
			t.Errorf("message %d is not the result of %s: %+v", 2+i, id, m)
		}
	}
	if r, err := s.RunToolCall(ctx, sdk.ToolCall{ID: "c4", Name: MemoryViewTool, Arguments: `{"label":"notes"}`}); err != nil || !strings.Contains(r.Text, "tests in ./pkg") {
		t.Errorf("RunToolCall: %+v, %v", r, err)
	}
	if msgs := s.Messages(); len(msgs) != 6 || msgs[4].ToolCalls[0].ID != "c4" || msgs[5].ToolCallID != "c4" || msgs[4].Metadata[MetaHidden] != "" {
		t.Errorf("RunToolCall did not record its call and result: %+v", msgs[4:])
	}
}
