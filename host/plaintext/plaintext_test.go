package plaintext

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/ctxhost/ctxhost/sdk"
	"github.com/ctxhost/ctxhost/sdk/assembly"
	"github.com/ctxhost/ctxhost/sdk/assembly/assemblytest"
	"github.com/google/go-cmp/cmp"
)

func assemble(t *testing.T, req sdk.AssembleRequest) string {
	t.Helper()
	res, err := New().Assemble(context.Background(), req)
	if err != nil {
		t.Fatalf("Assemble: %v", err)
	}
	if res.MediaType != "text/plain" || res.HasSystem {
		t.Errorf("media type %q, has system %v", res.MediaType, res.HasSystem)
	}
	return string(res.Payload)
}

func TestGolden(t *testing.T) {
	for _, c := range assemblytest.Cases() {
		t.Run(c.Name, func(t *testing.T) {
			got := assemble(t, c.Request)
			assemblytest.CheckNoEmptySections(t, got, nil)
			for _, marker := range []string{"[SYSTEM]", "[TEAM_TASK]", "[CONTEXT]", "[MESSAGE]", "Instructions:", "User message:"} {
				if strings.Contains(got, marker) {
					t.Errorf("plain text carries the marker %q", marker)
				}
			}
			assemblytest.Golden(t, c.Name+".txt", []byte(got))
		})
	}
}

func TestLayout(t *testing.T) {
	sys := sdk.Component{Name: sdk.ComponentSystemPrompt, Slot: sdk.SlotSystem, Text: " Be brief. "}
	hist := sdk.Component{Name: sdk.ComponentHistory, Slot: sdk.SlotHistory, Messages: []sdk.Message{{Role: sdk.RoleUser, Name: "kailai", Content: "Hi"}}}
	in := sdk.Component{Name: sdk.ComponentInput, Slot: sdk.SlotInput, Text: "Hello!"}
	blank := sdk.Component{Name: sdk.ComponentInstructions, Slot: sdk.SlotSystem, Text: "\n \n"}
	tests := []struct {
		name string
		cs   []sdk.Component
		want string
	}{
		{"all three", []sdk.Component{sys, hist, in}, "Be brief.\n\nkailai: Hi\n\nHello!"},
		{"no system", []sdk.Component{blank, hist, in}, "kailai: Hi\n\nHello!"},
		{"no context", []sdk.Component{sys, in}, "Be brief.\n\nHello!"},
		{"no message", []sdk.Component{sys, hist}, "Be brief.\n\nkailai: Hi"},
		{"only message", []sdk.Component{in}, "Hello!"},
		{"nothing", nil, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if diff := cmp.Diff(tt.want, assemble(t, sdk.AssembleRequest{Components: tt.cs})); diff != "" {
				t.Errorf("payload (-want +got):\n%s", diff)
			}
		})
	}
}

func TestInfoAndFormats(t *testing.T) {
	info := New().Info()
	if info.Name != "plaintext" || len(info.Formats) != 1 || info.Formats[0].Name != "text" || info.Formats[0].MediaType != "text/plain" {
		t.Errorf("info = %+v", info)
	}
	if got := assemble(t, sdk.AssembleRequest{Format: "text", Components: []sdk.Component{{Slot: sdk.SlotInput, Text: "x"}}}); got != "x" {
		t.Errorf("format text: %q", got)
	}
	_, err := New().Assemble(context.Background(), sdk.AssembleRequest{Format: "api"})
	if !errors.Is(err, sdk.ErrInvalidArgs) || !strings.Contains(err.Error(), `"api"`) {
		t.Errorf("unknown format error = %v, want ErrInvalidArgs naming the format", err)
	}
}

// TestCachedMatchesReference: with the message cache, the payload is the
// one rendered from scratch.
func TestCachedMatchesReference(t *testing.T) {
	assemblytest.CheckIncremental(t, describer{New()}, Format, func(req sdk.AssembleRequest) (sdk.AssembleResult, error) {
		p := assembly.Split(req)
		contextText := assembly.SystemBody(p.TeamTask, assembly.ContextBody(p.Context), assembly.RenderConversation(p.History))
		return sdk.AssembleResult{Payload: []byte(assembly.SystemBody(p.System, contextText, p.Input))}, nil
	})
}

// describer makes the host-side assembler an sdk.Assembler.
type describer struct{ *Assembler }

func (d describer) Describe() sdk.AssemblerInfo { return d.Info() }
