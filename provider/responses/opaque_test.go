package responses

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/ctxhost/ctxhost/provider/openai"
	"github.com/ctxhost/ctxhost/sdk"
	"github.com/ctxhost/ctxhost/sdk/assembly"
)

// TestUnmodelledItemsCarried: input items and content parts ctxhost does
// not model are opaque parts (an item in its turn, a part in its
// message), and go back upstream as they came, in their place, through
// the Chat Completions payload the assembler writes.
func TestUnmodelledItemsCarried(t *testing.T) {
	file := `{"file_data":"data:application/pdf;base64,JVBERi0=","filename":"a.pdf","type":"input_file"}`
	future := `{"payload":{"n":1.50,"s":"<&>"},"type":"brand_new_part"}`
	search := `{"type":"web_search_call","id":"ws_1","status":"completed","action":{"type":"search","query":"go \u00e9"}}`
	custom := `{"call_id":"cc_1","input":"*** Begin Patch","name":"apply_patch","type":"custom_tool_call"}`
	customOut := `{"call_id":"cc_1","output":"done","type":"custom_tool_call_output"}`
	newItem := `{"type":"brand_new_item","z":[true,null]}`
	input := `[{"role":"user","content":[{"type":"input_text","text":"read it"},` + file + `,` + future + `]},` +
		search + `,` + custom + `,` + customOut + `,` +
		`{"role":"assistant","content":[{"type":"output_text","text":"Patched.","annotations":[]}]},` +
		`{"role":"user","content":"and?"},` + newItem + `]`
	conv, err := DecodeInput(json.RawMessage(input), 0)
	if err != nil {
		t.Fatal(err)
	}
	if len(conv.Dropped) != 0 {
		t.Errorf("dropped %q", conv.Dropped)
	}
	if len(conv.Messages) != 4 {
		t.Fatalf("messages %+v", conv.Messages)
	}
	turn := conv.Messages[1]
	if turn.Role != sdk.RoleAssistant || len(turn.Parts) != 4 || turn.Parts[0].Provider != ItemProvider || turn.Parts[0].Opaque != search {
		t.Fatalf("assistant turn %+v", turn)
	}
	payload := []openai.Message{}
	for _, m := range conv.Messages {
		payload = append(payload, openai.HistoryMessage(m))
	}
	chat, err := assembly.Marshal(map[string]any{"messages": payload})
	if err != nil {
		t.Fatal(err)
	}
	back, _, err := FromChat(chat, nil)
	if err != nil {
		t.Fatal(err)
	}
	want := `[{"content":[{"text":"read it","type":"input_text"},` + file + `,` + future + `],"role":"user"},` +
		search + `,` + custom + `,` + customOut + `,` + `{"content":"Patched.","role":"assistant"},` +
		`{"content":"and?","role":"user"},` + newItem + `]`
	if string(back) != want {
		t.Errorf("input upstream\n%s\nwant\n%s", back, want)
	}
}

// TestOutputTextAnnotationsReported: output text annotations, which the
// call path does not carry, are named in Dropped.
func TestOutputTextAnnotationsReported(t *testing.T) {
	conv, err := DecodeInput(json.RawMessage(`[{"role":"user","content":"q"},{"role":"assistant","content":[{"type":"output_text","text":"a","annotations":[{"type":"url_citation","url":"https://go.dev"}]}]}]`), 0)
	if err != nil {
		t.Fatal(err)
	}
	if len(conv.Dropped) != 1 || !strings.Contains(conv.Dropped[0], "annotations") {
		t.Errorf("dropped %q", conv.Dropped)
	}
}
