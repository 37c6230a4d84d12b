package team

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ctxhost/ctxhost/host"
	"github.com/ctxhost/ctxhost/pluginhost"
	"github.com/ctxhost/ctxhost/sdk/plugintest"
	"github.com/google/go-cmp/cmp"
	"github.com/hashicorp/go-hclog"
)

// assemblers names the first-party assembler of each agent type: its
// package under plugins/ and its binary in binDir.
var assemblers = map[string]string{TypeClaudeCode: "assembler-claude", TypeOpenAICodex: "assembler-codex", TypeGoogleGemini: "assembler-gemini"}

// binDir holds the assemblers, built by TestMain.
var binDir string

func TestMain(m *testing.M) {
	pkgs := map[string]string{}
	for _, name := range assemblers {
		pkgs[name] = "../../plugins/" + name
	}
	plugintest.MainWithBinaries(m, pkgs, &binDir)
}

// launchAssemblers starts the three assembler processes for one test.
func launchAssemblers(t *testing.T) map[string]host.Assembler {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	var reg pluginhost.Registry
	t.Cleanup(reg.KillAll)
	out := map[string]host.Assembler{}
	for typ, name := range assemblers {
		c, err := reg.Launch(ctx, pluginhost.Spec{Name: typ, Kind: pluginhost.KindAssembler, Path: filepath.Join(binDir, name), Logger: hclog.NewNullLogger()})
		if err != nil {
			t.Fatalf("launch %s: %v", typ, err)
		}
		out[typ] = c.Assembler
	}
	return out
}

// TestParallelNextRouting: the user sends
// "[NEXT:max] [NEXT:sarah] [NEXT:carol] Hi"; max, sarah and carol answer
// in turn, each response added before the next agent is prepared. Every
// agent's payload comes from its real assembler process.
func TestParallelNextRouting(t *testing.T) {
	asms := launchAssemblers(t)
	router := agentRouter{
		byAgent: map[string]host.Assembler{"max": asms[TypeClaudeCode], "sarah": asms[TypeOpenAICodex], "carol": asms[TypeGoogleGemini]},
		formats: map[string]string{"max": "cli", "sarah": "cli", "carol": "text"},
	}
	tm := newTeam(t, Options{
		Agents: map[string]Agent{
			"max":   {Type: TypeClaudeCode, SystemInstruction: "You are Max, the product manager."},
			"sarah": {Type: TypeOpenAICodex, SystemInstruction: "You are Sarah, the engineer."},
			"carol": {Type: TypeGoogleGemini, SystemInstruction: "You are Carol, the designer."},
		},
	})
	tm.SetTeamTask("Plan the v2 launch")
	mustAdd(t, tm, human("kailai", "[NEXT:max] [NEXT:sarah] [NEXT:carol] Hi"))

	type turn struct {
		agent       string
		wantContext []short
		wantCurrent string
		wantSystem  string
		wantPayload string
		reply       string
	}
	turns := []turn{
		{
			agent: "max", wantContext: []short{}, wantCurrent: "Hi",
			wantSystem:  "You are Max, the product manager.",
			wantPayload: "[TEAM_TASK]\nPlan the v2 launch\n\n[MESSAGE]\nHi",
			reply:       "我建议 we ship in May.",
		},
		{
			agent: "sarah", wantContext: []short{{"kailai", "user", "Hi"}}, wantCurrent: "我建议 we ship in May.",
			wantPayload: "[SYSTEM]\nYou are Sarah, the engineer.\n\n[TEAM_TASK]\nPlan the v2 launch\n\n[CONTEXT]\nkailai: Hi\n\n[MESSAGE]\n我建议 we ship in May.",
			reply:       "技术上 May works.",
		},
		{
			agent: "carol", wantContext: []short{{"kailai", "user", "Hi"}, {"max", "user", "我建议 we ship in May."}}, wantCurrent: "技术上 May works.",
			wantPayload: "Instructions:\nYou are Carol, the designer.\n\nTeam task:\nPlan the v2 launch\n\nConversation so far:\nkailai: Hi\nmax: 我建议 we ship in May.\n\nUser message:\n技术上 May works.",
		},
	}
	for _, tr := range turns {
		p, err := prepare(t, tm, tr.agent, router)
		if err != nil {
			t.Fatalf("prepare %s: %v", tr.agent, err)
		}
		if diff := cmp.Diff(tr.wantContext, shorten(p.View.History)); diff != "" {
			t.Errorf("%s context (-want +got):\n%s", tr.agent, diff)
		}
		if p.View.Input != tr.wantCurrent {
			t.Errorf("%s current = %q, want %q", tr.agent, p.View.Input, tr.wantCurrent)
		}
		if got := string(p.Payload); got != tr.wantPayload {
			t.Errorf("%s payload:\n%s\nwant:\n%s", tr.agent, got, tr.wantPayload)
		}
		if p.System != tr.wantSystem || p.HasSystem != (tr.wantSystem != "") {
			t.Errorf("%s system = %q (has %v), want %q", tr.agent, p.System, p.HasSystem, tr.wantSystem)
		}
		if strings.Contains(string(p.Payload), "[NEXT:") {
			t.Errorf("%s payload keeps a routing marker", tr.agent)
		}
		if tr.reply != "" {
			mustAdd(t, tm, ai(tr.agent, tr.reply))
		}
	}
}

// TestChainDedupAndTrimThroughProcesses: Max → Sarah → Carol with
// repeated answers (AI→AI dedup) and a byte budget that forces the shared
// trimmer to drop the oldest context, through the real Gemini assembler.
func TestChainDedupAndTrimThroughProcesses(t *testing.T) {
	asms := launchAssemblers(t)
	router := agentRouter{byAgent: map[string]host.Assembler{"carol": asms[TypeGoogleGemini], "max": asms[TypeClaudeCode]},
		formats: map[string]string{"carol": "text", "max": "cli"}}
	tm := newTeam(t, Options{
		MaxBytes: 120,
		Agents:   map[string]Agent{"carol": {Type: TypeGoogleGemini}, "max": {Type: TypeClaudeCode}},
	})
	mustAdd(t, tm,
		human("kailai", "[NEXT:max] Oldest question about the launch date"),
		ai("max", "An answer of some length"),
		ai("sarah", "[NEXT:carol] Same words"),
		ai("sarah", "Same words [NEXT:carol]"),
	)
	p, err := prepare(t, tm, "carol", router)
	if err != nil {
		t.Fatal(err)
	}
	want := "Conversation so far:\nmax: An answer of some length\n\nUser message:\nSame words"
	if got := string(p.Payload); got != want || p.View.Dropped != 1 {
		t.Errorf("payload (dropped %d):\n%s\nwant (dropped 1):\n%s", p.View.Dropped, got, want)
	}
	if p.View.Bytes > 120 {
		t.Errorf("%d bytes over the 120 budget", p.View.Bytes)
	}
}
