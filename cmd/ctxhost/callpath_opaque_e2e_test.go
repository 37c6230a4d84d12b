package main

import (
	"encoding/json"
	"strings"
	"testing"
)

// canonical is a JSON text re-encoded as the recording upstream's bodies
// are read back (object keys sorted).
func canonical(t *testing.T, s string) string {
	t.Helper()
	var v any
	if err := json.Unmarshal([]byte(s), &v); err != nil {
		t.Fatalf("%s: %v", s, err)
	}
	b, _ := json.Marshal(v)
	return string(b)
}

// TestCallPathUnmodelledContentCarried: through every endpoint, content
// ctxhost does not model (OpenAI Chat input_audio and file parts, a part
// or a Responses item of a type that does not exist yet, an Anthropic
// block or a Gemini part of a new kind) goes upstream as the caller sent
// it, in its place, and the conversation sent again with the answer is
// recognised (the history is not replaced), the parts still in it.
func TestCallPathUnmodelledContentCarried(t *testing.T) {
	up, srv := startRecordingCallPath(t)
	base := "http://" + srv.addr
	bearer := map[string]string{"Authorization": "Bearer " + standinKey}
	gemini := map[string]string{"x-goog-api-key": standinKey}
	audio := `{"type":"input_audio","input_audio":{"data":"UklGRiQAAABXQVZF","format":"wav"}}`
	file := `{"type":"file","file":{"filename":"a.pdf","file_data":"data:application/pdf;base64,JVBERi0xLjQ="}}`
	future := `{"type":"brand_new_part","payload":{"n":1.50,"list":[true,null,"x"]}}`
	search := `{"type":"web_search_call","id":"ws_1","status":"completed","action":{"type":"search","query":"go 1.26"}}`
	custom := `{"type":"custom_tool_call","call_id":"cc_1","name":"apply_patch","input":"*** Begin Patch\n*** End Patch"}`
	customOut := `{"type":"custom_tool_call_output","call_id":"cc_1","output":"patched"}`
	inputFile := `{"type":"input_file","filename":"b.pdf","file_data":"data:application/pdf;base64,JVBERi0xLjQ="}`
	newItem := `{"type":"brand_new_item","z":{"deep":[1,2,3]}}`
	block := `{"type":"brand_new_block","data":{"k":"v"}}`
	part := `{"brandNewPart":{"k":"v"}}`

	for _, c := range []struct {
		name, path string
		header     map[string]string
		first      string // the request's conversation field and body
		body       func(conv string) string
		field      string
		answer     string // the recording upstream's answer as the caller sends it back
		next       string
		carried    []string
	}{
		{"chat", "/v1/chat/completions", bearer,
			`[{"role":"user","content":[{"type":"text","text":"TASK-ID: opaque-chat. Listen and read."},` + audio + `,` + file + `,` + future + `]}]`,
			func(conv string) string { return `{"model":"gpt-4o","messages":` + conv + `}` }, "messages",
			`{"role":"assistant","content":"answer %d"}`, `{"role":"user","content":"And then?"}`, []string{audio, file, future}},
		{"responses", "/v1/responses", bearer,
			`[{"role":"user","content":[{"type":"input_text","text":"TASK-ID: opaque-responses. Read it."},` + inputFile + `,` + future + `]},` +
				search + `,` + custom + `,` + customOut + `,{"role":"assistant","content":[{"type":"output_text","text":"Patched.","annotations":[]}]},` +
				`{"role":"user","content":"Go on."},` + newItem + `]`,
			func(conv string) string { return `{"model":"gpt-4o","input":` + conv + `}` }, "input",
			`{"type":"message","id":"msg_%d","status":"completed","role":"assistant","content":[{"type":"output_text","text":"answer %[1]d","annotations":[]}]}`,
			`{"role":"user","content":"And then?"}`, []string{inputFile, future, search, custom, customOut, newItem}},
		{"messages", "/v1/messages", anthropicKey,
			`[{"role":"user","content":[{"type":"text","text":"TASK-ID: opaque-messages. Look."},` + block + `]}]`,
			func(conv string) string { return `{"model":"claude","max_tokens":9,"messages":` + conv + `}` }, "messages",
			`{"role":"assistant","content":[{"type":"text","text":"answer %d"}]}`, `{"role":"user","content":"And then?"}`, []string{block}},
		{"generateContent", "/v1beta/models/gemini-2.5-flash:generateContent", gemini,
			`[{"role":"user","parts":[{"text":"TASK-ID: opaque-gemini. Look."},` + part + `]}]`,
			func(conv string) string { return `{"contents":` + conv + `}` }, "contents",
			`{"role":"model","parts":[{"executableCode":{"language":"PYTHON","code":"print(%d)"}},{"codeExecutionResult":{"outcome":"OUTCOME_OK","output":"%[1]d\n"}},{"text":"answer %[1]d"}]}`,
			`{"role":"user","parts":[{"text":"And then?"}]}`, []string{part}},
	} {
		t.Run(c.name, func(t *testing.T) {
			check := func(when string) {
				t.Helper()
				sent, _ := json.Marshal(up.last()[c.field])
				at := 0
				for _, want := range c.carried {
					i := strings.Index(string(sent[at:]), canonical(t, want))
					if i < 0 {
						t.Errorf("%s: %s did not go upstream in its place; upstream %s\n%s", when, want, c.field, sent)
						return
					}
					at += i
				}
			}
			code, h, out, err := post(t, base+c.path, c.header, c.body(c.first))
			if err != nil || code != 200 {
				t.Fatalf("first call: %d %s %v", code, out, err)
			}
			check("first call")
			n := up.calls()
			answer := strings.ReplaceAll(c.answer, "%d", itoa(n))
			answer = strings.ReplaceAll(answer, "%[1]d", itoa(n))
			conv := strings.TrimSuffix(c.first, "]") + "," + answer + "," + c.next + "]"
			code, h2, out, err := post(t, base+c.path, c.header, c.body(conv))
			if err != nil || code != 200 {
				t.Fatalf("second call: %d %s %v", code, out, err)
			}
			if h2.Get("Ctxhost-History") != "" || h2.Get("Ctxhost-Session") != h.Get("Ctxhost-Session") {
				t.Errorf("the conversation sent again was not recognised: history %q, session %q then %q",
					h2.Get("Ctxhost-History"), h.Get("Ctxhost-Session"), h2.Get("Ctxhost-Session"))
			}
			check("second call")
		})
	}
}

// TestCallPathDroppedCounted: what a caller sends that ctxhost reads and
// does not carry (a Responses output text's annotations, a Chat message's
// name) still goes through, and each is counted in
// ctxhost_upstream_dropped_total by what it is.
func TestCallPathDroppedCounted(t *testing.T) {
	up, srv := startRecordingCallPath(t)
	base := "http://" + srv.addr
	bearer := map[string]string{"Authorization": "Bearer " + standinKey}
	code, _, out, err := post(t, base+"/v1/responses", bearer, `{"model":"gpt-4o","input":[{"role":"user","content":"TASK-ID: dropped-1. Cite."},`+
		`{"role":"assistant","content":[{"type":"output_text","text":"See go.dev.","annotations":[{"type":"url_citation","url":"https://go.dev","start_index":4,"end_index":10,"title":"Go"}]}]},{"role":"user","content":"More."}]}`)
	if err != nil || code != 200 {
		t.Fatalf("responses: %d %s %v", code, out, err)
	}
	code, _, out, err = post(t, base+"/v1/chat/completions", bearer, `{"model":"gpt-4o","messages":[{"role":"user","name":"ann","content":"TASK-ID: dropped-2. Hi."}]}`)
	if err != nil || code != 200 || up.calls() != 2 {
		t.Fatalf("chat: %d %s %v (%d upstream calls)", code, out, err, up.calls())
	}
	metrics := getText(t, base+"/metrics", "")
	for _, what := range []string{"output_text annotations", "message name"} {
		if v := metricValue(metrics, `ctxhost_upstream_dropped_total{upstream="openai",what="`+what+`"}`); v != 1 {
			t.Errorf("dropped %q counted %v, want 1", what, v)
		}
	}
}

func itoa(n int) string {
	b, _ := json.Marshal(n)
	return string(b)
}
