package openai

import (
	"encoding/json"
	"testing"

	"github.com/ctxhost/ctxhost/sdk"
	"github.com/ctxhost/ctxhost/sdk/assembly"
)

// TestUnmodelledPartsCarried: content parts ctxhost does not model
// (input_audio, file, a type that does not exist yet) are opaque parts,
// counted by their size, and each message is written back as it came.
func TestUnmodelledPartsCarried(t *testing.T) {
	audio := `{"type":"input_audio","input_audio":{"format":"wav","data":"UklGRg=="}}`
	file := `{"type":"file","file":{"filename":"a.pdf","file_data":"data:application/pdf;base64,JVBERi0="}}`
	future := `{"x":{"deep":[1,2.50,"<&>","\u00e9\/"]},"type":"brand_new_part"}`
	msgs := `[{"role":"user","content":[{"type":"text","text":"listen"},` + audio + `,` + file + `,` + future + `]},` +
		`{"role":"assistant","content":[{"type":"text","text":"heard"},` + future + `]},` +
		`{"role":"user","content":"next"}]`
	conv, err := DecodeMessages(json.RawMessage(msgs), 0)
	if err != nil {
		t.Fatal(err)
	}
	if len(conv.Messages) != 3 || len(conv.Messages[0].Parts) != 4 {
		t.Fatalf("messages %+v", conv.Messages)
	}
	for _, p := range conv.Messages[0].Parts[1:] {
		if p.Type != sdk.PartOpaque || p.Provider != Provider {
			t.Errorf("part %+v: want an opaque part of %q", p, Provider)
		}
		if n := sdk.PartTokens(func(string) int { return 0 }, sdk.MediaOpenAI, p); n < len(p.Opaque)/sdk.OpaqueBytesPerToken {
			t.Errorf("part of %d bytes counted %d tokens", len(p.Opaque), n)
		}
	}
	out := make([]Message, len(conv.Messages))
	for i, m := range conv.Messages {
		out[i] = HistoryMessage(m)
	}
	got, err := assembly.Marshal(out)
	if err != nil {
		t.Fatal(err)
	}
	if string(got) != msgs {
		t.Errorf("written back\n%s\nwant\n%s", got, msgs)
	}
}

// TestUnreadFieldsReported: fields ctxhost reads and does not carry are
// named in Dropped.
func TestUnreadFieldsReported(t *testing.T) {
	conv, err := DecodeMessages(json.RawMessage(`[{"role":"user","name":"ann","content":"q"},{"role":"assistant","content":"a","audio":{"id":"au_1"}}]`), 0)
	if err != nil {
		t.Fatal(err)
	}
	if len(conv.Dropped) != 2 || conv.Dropped[0] != "message name" || conv.Dropped[1] != "message audio" {
		t.Errorf("dropped %q", conv.Dropped)
	}
}

// TestLaterSystemMessages: a system or developer message after the
// opening is system text (Later), never a history message; in a tail
// (first > 0) every one is.
func TestLaterSystemMessages(t *testing.T) {
	raw := json.RawMessage(`[{"role":"system","content":"a"},{"role":"user","content":"q"},{"role":"developer","content":[{"type":"text","text":"b"}]},{"role":"user","content":"r"}]`)
	conv, err := DecodeMessages(raw, 0)
	if err != nil {
		t.Fatal(err)
	}
	if conv.System != "a" || len(conv.Later) != 1 || conv.Later[0] != "b" || len(conv.Messages) != 2 {
		t.Errorf("opening %q later %q messages %+v", conv.System, conv.Later, conv.Messages)
	}
	tail, err := DecodeMessages(json.RawMessage(`[{"role":"system","content":"c"}]`), 4)
	if err != nil || tail.HasSystem || len(tail.Later) != 1 || len(tail.Messages) != 0 {
		t.Errorf("tail %+v %v", tail, err)
	}
}
