package responses

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ctxhost/ctxhost/internal/shareddata"
	"github.com/ctxhost/ctxhost/provider/jsontest"
)

// openAPIResponses are the documents of OpenAI's OpenAPI description
// (../shared/data/schemas/openai-openapi.json) that are responses or
// events of a response's stream: each example, and each event of an
// example stream on its own.
func openAPIResponses(t testing.TB) [][]byte {
	raw, err := os.ReadFile(filepath.Join(shareddata.Require(t), "schemas", "openai-openapi.json"))
	if err != nil {
		t.Fatal(err)
	}
	var spec any
	if err := json.Unmarshal(raw, &spec); err != nil {
		t.Fatal(err)
	}
	var out [][]byte
	var walk func(v any)
	walk = func(v any) {
		switch v := v.(type) {
		case map[string]any:
			for _, e := range v {
				walk(e)
			}
		case []any:
			for _, e := range v {
				walk(e)
			}
		case string:
			if !strings.Contains(v, `"object": "response"`) && !strings.Contains(v, `"object":"response"`) && !strings.Contains(v, `"type":"response.`) && !strings.Contains(v, `"type": "response.`) {
				return
			}
			for _, piece := range strings.Split(v, "\n\n") {
				piece = strings.TrimSpace(piece)
				if _, data, ok := strings.Cut(piece, "data: "); ok {
					piece = data
				}
				if json.Valid([]byte(piece)) && strings.HasPrefix(piece, "{") {
					out = append(out, []byte(piece))
				}
			}
		}
	}
	walk(spec)
	if len(out) == 0 {
		t.Fatal("no response in the OpenAPI description")
	}
	return out
}

// ownResponses are documents the examples lack: a function call, a
// reasoning item, content with parts of every type, an image, a
// response.incomplete event.
var ownResponses = []string{
	`{"id":"resp_1","object":"response","output":[{"type":"reasoning","id":"rs_1","summary":[{"type":"summary_text","text":"thinking"}],"encrypted_content":"gAAAA"},{"type":"function_call","id":"fc_1","call_id":"call_1","name":"get","arguments":"{\"q\":\"caf\u00e9\"}","status":"completed"}],"usage":{"input_tokens":30,"output_tokens":9,"input_tokens_details":{"cached_tokens":16},"output_tokens_details":{"reasoning_tokens":4}}}`,
	`{"type":"message","id":"msg_1","role":"assistant","content":[{"type":"output_text","text":"a \"b\" 😀\n","annotations":[{"type":"url_citation","url":"https://x"}],"logprobs":[]},{"type":"refusal","refusal":"no"},{"type":"input_image","image_url":"https://x/i.png","detail":"low"},{"type":"brand_new","x":1}]}`,
	`{"type":"function_call_output","call_id":"call_1","output":"42"}`,
	`{"type":"response.incomplete","sequence_number":9,"response":{"id":"resp_2","status":"incomplete","output":[],"usage":null}}`,
}

// TestReadAsUnmarshal: the one-pass readers of a stream's event, a
// response, an item, a content part and an item's id read the OpenAPI
// description's responses and stream events and the documents above, and
// 300 variants of each (keys in other cases or twice, members dropped,
// values of other types, escapes, surrogates, invalid UTF-8), as
// json.Unmarshal reads them, or decline them; they decline none of the
// documents as they came.
func TestReadAsUnmarshal(t *testing.T) {
	docs := openAPIResponses(t)
	for _, d := range ownResponses {
		docs = append(docs, []byte(d))
	}
	for _, d := range docs {
		if jsontest.SameAsUnmarshal(t, d, readEvent) || jsontest.SameAsUnmarshal(t, d, readResponse) ||
			jsontest.SameAsUnmarshal(t, d, readItem) || jsontest.SameAsUnmarshal(t, d, readPart) {
			t.Errorf("declined %s", d)
		}
	}
	declined := 0
	for _, doc := range jsontest.AllVariants(t, docs, 50, 0.05, 0.3) {
		for _, d := range []bool{jsontest.SameAsUnmarshal(t, doc, readEvent), jsontest.SameAsUnmarshal(t, doc, readResponse),
			jsontest.SameAsUnmarshal(t, doc, readItem), jsontest.SameAsUnmarshal(t, doc, readPart),
			jsontest.SameAsUnmarshal(t, doc, readParts), sameID(t, doc)} {
			if d {
				declined++
			}
		}
	}
	t.Logf("%d documents and their variants: %d reads declined that json.Unmarshal reads", len(docs), declined)
}

// sameID checks itemID against json.Unmarshal's reading of an id.
func sameID(t testing.TB, doc []byte) bool {
	t.Helper()
	var head struct {
		ID string `json:"id"`
	}
	err := json.Unmarshal(doc, &head)
	id, ok := itemID(doc)
	if ok != (err == nil) || ok && id != head.ID {
		t.Fatalf("%s: id %q %v, json.Unmarshal %q %v", doc, id, ok, head.ID, err)
	}
	return false
}

// FuzzRead: whatever the document, the readers read it as json.Unmarshal
// does or decline it.
func FuzzRead(f *testing.F) {
	for _, d := range ownResponses {
		f.Add([]byte(d))
	}
	f.Fuzz(func(t *testing.T, doc []byte) {
		jsontest.SameAsUnmarshal(t, doc, readEvent)
		jsontest.SameAsUnmarshal(t, doc, readResponse)
		jsontest.SameAsUnmarshal(t, doc, readItem)
		jsontest.SameAsUnmarshal(t, doc, readPart)
		jsontest.SameAsUnmarshal(t, doc, readParts)
		sameID(t, doc)
	})
}

// TestAnswerFromTheTail: a stream's response.completed is read into the
// same answer as the response read whole.
func TestAnswerFromTheTail(t *testing.T) {
	resp := `{"id":"resp_3","output":[{"type":"message","id":"msg_3","role":"assistant","content":[{"type":"output_text","text":"done \u00e9"}]}],"usage":{"input_tokens":5,"output_tokens":2}}`
	s := NewAnswer()
	if last, err := s.Event("response.completed", []byte(`{"type":"response.completed","sequence_number":3,"response":`+resp+`}`)); !last || err != nil {
		t.Fatal(last, err)
	}
	w := NewAnswer()
	if err := w.Whole([]byte(resp)); err != nil {
		t.Fatal(err)
	}
	sm, sok, su := s.Result()
	wm, wok, wu := w.Result()
	if !sok || !wok || sm.Content != "done é" || wm.Content != sm.Content || su != wu || s.ID() != "resp_3" || string(s.Response()) != resp ||
		len(s.Output()) != 1 || ItemID(s.Output()[0]) != "msg_3" {
		t.Fatalf("streamed %+v %+v, whole %+v %+v", sm, su, wm, wu)
	}
}

// BenchmarkTail reads a response.completed event of 1 MB of text to
// the answer's message, in one pass (read) and by json.Unmarshal
// (unmarshal), in one run.
func BenchmarkTail(b *testing.B) {
	text := strings.Repeat("a line of the answer\\n", 50000)
	doc := []byte(`{"type":"response.completed","sequence_number":90,"response":{"id":"resp_1","object":"response","status":"completed","output":[{"type":"message","id":"msg_1","status":"completed","role":"assistant","content":[{"type":"output_text","text":"` + text + `","annotations":[]}]}],"usage":{"input_tokens":30,"output_tokens":9}}}`)
	b.Run("completed-1MB/unmarshal", func(b *testing.B) {
		b.SetBytes(int64(len(doc)))
		for b.Loop() {
			var ev streamEvent
			var r response
			var it Item
			var parts []json.RawMessage
			var p part
			var s string
			if json.Unmarshal(doc, &ev) != nil || json.Unmarshal(ev.Response, &r) != nil || json.Unmarshal(r.Output[0], &it) != nil ||
				json.Unmarshal(it.Content, &parts) != nil || json.Unmarshal(parts[0], &p) != nil || json.Unmarshal(r.Output[0], &struct{ ID string }{}) != nil {
				b.Fatal("not read")
			}
			s = p.Text
			_ = s
		}
	})
	b.Run("completed-1MB/read", func(b *testing.B) {
		b.SetBytes(int64(len(doc)))
		for b.Loop() {
			a := NewAnswer()
			if last, err := a.Event("response.completed", doc); !last || err != nil {
				b.Fatal(err)
			}
			if _, ok, _ := a.Result(); !ok || ItemID(a.Output()[0]) != "msg_1" {
				b.Fatal("not read")
			}
		}
	})
}
