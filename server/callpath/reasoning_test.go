package callpath

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/ctxhost/ctxhost/internal/jsonprefix"
	"github.com/ctxhost/ctxhost/provider/responses"
	"github.com/ctxhost/ctxhost/sdk"
)

// TestResponsesReasoningBackInPlace: the reasoning items a Responses
// caller sent with its assistant turns go upstream again before each
// turn's output items, for the turns the prepared context still shows
// with them; a turn shown without them (stripped) gets none.
func TestResponsesReasoningBackInPlace(t *testing.T) {
	input := `[{"role":"user","content":"task"},
	{"type":"reasoning","id":"rs_1","summary":[],"encrypted_content":"enc-1"},
	{"type":"function_call","call_id":"c1","name":"read","arguments":"{}"},
	{"type":"function_call_output","call_id":"c1","output":"one"},
	{"type":"reasoning","id":"rs_2","summary":[],"encrypted_content":"enc-2"},
	{"role":"assistant","content":[{"type":"output_text","text":"Reading two."}]},
	{"type":"function_call","call_id":"c2","name":"read","arguments":"{}"},
	{"type":"function_call_output","call_id":"c2","output":"two"},
	{"type":"reasoning","id":"rs_3","summary":[],"encrypted_content":"enc-3"},
	{"role":"assistant","content":[{"type":"output_text","text":"Done."}]}]`
	c, err := responsesDialect{}.conversation(json.RawMessage(input), 0)
	if err != nil {
		t.Fatal(err)
	}
	view := c.messages
	stripped := view[1]
	stripped.Parts = nil // the first turn's reasoning stripped under pressure
	view[1] = stripped
	payload := `{"model":"m","messages":[{"role":"system","content":"sys"},{"role":"user","content":"task"},
	{"role":"assistant","tool_calls":[{"id":"c1","type":"function","function":{"name":"read","arguments":"{}"}}]},
	{"role":"tool","tool_call_id":"c1","content":"one"},
	{"role":"assistant","content":"Reading two.","tool_calls":[{"id":"c2","type":"function","function":{"name":"read","arguments":"{}"}}]},
	{"role":"tool","tool_call_id":"c2","content":"two"},
	{"role":"assistant","content":"Done."}]}`
	req := &request{fields: jsonprefix.Object{{Key: "model", Value: json.RawMessage(`"m"`)}, {Key: "input", Value: json.RawMessage(input)}},
		reasoning: responses.ReasoningIndex([]sdk.Component{{Name: "history", Messages: view}})}
	out, err := responsesDialect{}.build(req, []byte(payload))
	if err != nil {
		t.Fatal(err)
	}
	var body struct {
		Input []map[string]any `json:"input"`
	}
	if err := json.Unmarshal(out.bytes(), &body); err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, it := range body.Input {
		typ, _ := it["type"].(string)
		switch typ {
		case "reasoning":
			got = append(got, "reasoning:"+it["encrypted_content"].(string))
		case "function_call", "function_call_output":
			got = append(got, typ+":"+it["call_id"].(string))
		default:
			got = append(got, "message:"+it["role"].(string))
		}
	}
	want := "message:user function_call:c1 function_call_output:c1 reasoning:enc-2 message:assistant function_call:c2 function_call_output:c2 reasoning:enc-3 message:assistant"
	if strings.Join(got, " ") != want {
		t.Errorf("input items\n got %s\nwant %s", strings.Join(got, " "), want)
	}
}
