package anthropic

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/ctxhost/ctxhost/provider/jsontest"
)

// answers are a Messages answer's documents as the API documents them:
// a stream's events of text, tool use, thinking, a server tool and an
// error, and whole messages of text, citations, tool use and redacted
// thinking.
var answers = []string{
	`{"type":"message_start","message":{"id":"msg_1nZdL29xx5MUA1yADyHTEsnR8uuvGzszyY","type":"message","role":"assistant","content":[],"model":"claude-sonnet-4-5","stop_reason":null,"stop_sequence":null,"usage":{"input_tokens":25,"output_tokens":1,"cache_creation_input_tokens":0,"cache_read_input_tokens":2048}}}`,
	`{"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}`,
	`{"type": "ping"}`,
	`{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"Hello \"world\" caf\u00e9 😀\n"}}`,
	`{"type":"content_block_stop","index":0}`,
	`{"type":"content_block_start","index":1,"content_block":{"type":"tool_use","id":"toolu_01T1x1fJ34qAmk2tNTrN7Up6","name":"get_weather","input":{}}}`,
	`{"type":"content_block_delta","index":1,"delta":{"type":"input_json_delta","partial_json":"{\"location\": \"San Fra"}}`,
	`{"type":"content_block_start","index":0,"content_block":{"type":"thinking","thinking":"","signature":""}}`,
	`{"type":"content_block_delta","index":0,"delta":{"type":"thinking_delta","thinking":"Let me solve this step by step..."}}`,
	`{"type":"content_block_delta","index":0,"delta":{"type":"signature_delta","signature":"EqQBCgIYAhIM1gbcDa9GJwZA2b3hGgxBdjrkzLoky3dl1pkiMOYds"}}`,
	`{"type":"content_block_start","index":1,"content_block":{"type":"server_tool_use","id":"srvtoolu_014hJH82Qum7Td6UV8gDXThB","name":"web_search","input":{}}}`,
	`{"type":"message_delta","delta":{"stop_reason":"end_turn","stop_sequence":null},"usage":{"output_tokens":15}}`,
	`{"type":"message_stop"}`,
	`{"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}}`,
	`{"id":"msg_013Zva2CMHLNnXjNJJKqJ2EF","type":"message","role":"assistant","model":"claude-sonnet-4-5","content":[{"type":"text","text":"Hi! My name is Claude."}],"stop_reason":"end_turn","stop_sequence":null,"usage":{"input_tokens":2095,"output_tokens":503,"cache_creation_input_tokens":10,"cache_read_input_tokens":null}}`,
	`{"content":[{"type":"text","text":"the grass is green","citations":[{"type":"char_location","cited_text":"The grass is green.","document_index":0,"start_char_index":0,"end_char_index":20}]},{"type":"text","text":" and","citations":null}],"usage":{"input_tokens":10,"output_tokens":3}}`,
	`{"content":[{"type":"thinking","thinking":"hmm","signature":"sig"},{"type":"redacted_thinking","data":"EmwKAhgBEgy3va3pzix/LafPsn4a"},{"type":"tool_use","id":"toolu_1","name":"get","input":{"q":[1,2.5,"x"]}}],"usage":null}`,
	`{"content":[{"type":"image","source":{"type":"base64","media_type":"image/png","data":"iVBORw0KGgo="}},{"type":"tool_result","tool_use_id":"t","content":[{"type":"text","text":"r"}],"is_error":true}]}`,
}

// requests are a request's messages and a content's blocks.
var requests = []string{
	`[{"role":"user","content":"What is the weather in Paris? \u00e9"},{"role":"assistant","content":[{"type":"thinking","thinking":"t","signature":"s"},{"type":"text","text":"Let me check."},{"type":"tool_use","id":"toolu_1","name":"get_weather","input":{"city":"Paris"}}]},{"role":"user","content":[{"type":"tool_result","tool_use_id":"toolu_1","content":"18C","is_error":false},{"type":"text","text":"and tomorrow?","cache_control":{"type":"ephemeral"}}]}]`,
	`[{"type":"text","text":"a"},{"type":"image","source":{"type":"url","url":"https://x/i.png"}},{"type":"document","title":"d","source":{"type":"base64","media_type":"application/pdf","data":"JVBERi0="}},{"type":"redacted_thinking","data":"EmwK"}]`,
	`[{"type":"text","text":"cited","citations":[{"type":"char_location"}]},{"type":"web_search_tool_result","tool_use_id":"s","content":[]}]`,
}

// TestReadAsUnmarshal: the one-pass readers of a stream's event, a whole
// message, a request's messages and a content's blocks read the
// documents above and 300 variants of each (keys
// in other cases or twice, members dropped, values of other types,
// escapes, surrogates, invalid UTF-8) as json.Unmarshal reads them, or
// decline them; they decline none of the documents as they came but
// those whose blocks are kept whole (a server tool's, citations).
func TestReadAsUnmarshal(t *testing.T) {
	var docs [][]byte
	for _, a := range append(append([]string{}, answers...), requests...) {
		docs = append(docs, []byte(a))
	}
	all := jsontest.AllVariants(t, docs, 150, 0.05, 0.3)
	declined := 0
	for _, doc := range all {
		for _, d := range []bool{jsontest.SameAsUnmarshal(t, doc, readEvent), jsontest.SameAsUnmarshal(t, doc, readWhole),
			jsontest.SameAsUnmarshal(t, doc, readMessages), jsontest.SameAsUnmarshal(t, doc, readBlocks)} {
			if d {
				declined++
			}
		}
	}
	if jsontest.SameAsUnmarshal(t, []byte(requests[0]), readMessages) || jsontest.SameAsUnmarshal(t, []byte(requests[1]), readBlocks) ||
		!jsontest.SameAsUnmarshal(t, []byte(requests[2]), readBlocks) {
		t.Error("requests read or declined as they should not")
	}
	t.Logf("%d documents, each read as an event, a message, messages and blocks: %d declined that json.Unmarshal reads", len(all), declined)
	for _, a := range answers {
		opaque := strings.Contains(a, "server_tool_use") || strings.Contains(a, `"citations":[`)
		read := readWhole([]byte(a), &wholeBody{})
		if strings.HasPrefix(a, `{"type"`) {
			read = readEvent([]byte(a), &event{})
		}
		if read == opaque {
			t.Errorf("read or declined as it should not %s", a)
		}
	}
}

// FuzzReadEvent: whatever the document, the readers read it
// as json.Unmarshal does or decline it.
func FuzzReadEvent(f *testing.F) {
	for _, a := range answers {
		f.Add([]byte(a))
	}
	for _, a := range requests {
		f.Add([]byte(a))
	}
	f.Fuzz(func(t *testing.T, doc []byte) {
		jsontest.SameAsUnmarshal(t, doc, readEvent)
		jsontest.SameAsUnmarshal(t, doc, readWhole)
		jsontest.SameAsUnmarshal(t, doc, readMessages)
		jsontest.SameAsUnmarshal(t, doc, readBlocks)
	})
}

// BenchmarkRead reads a text delta of 4 KB in one pass (read) and by
// json.Unmarshal (unmarshal), in one run.
func BenchmarkRead(b *testing.B) {
	doc := []byte(`{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"` + strings.Repeat("delta text ", 370) + `"}}`)
	for _, fast := range []bool{false, true} {
		name := "unmarshal"
		if fast {
			name = "read"
		}
		b.Run("delta-4KB/"+name, func(b *testing.B) {
			b.SetBytes(int64(len(doc)))
			b.ReportAllocs()
			for b.Loop() {
				var ev event
				if !(fast && readEvent(doc, &ev) || json.Unmarshal(doc, &ev) == nil) {
					b.Fatal("not read")
				}
			}
		})
	}
}

// BenchmarkDecodeMessages converts a request of 1,000 messages (500
// tool uses and their results) with the one-pass readers (read) and with
// json.Unmarshal alone (unmarshal: the readers declining), in one run.
func BenchmarkDecodeMessages(b *testing.B) {
	var msgs []string
	for i := range 500 {
		id := "toolu_" + strings.Repeat("x", i%7) + string(rune('a'+i%26))
		msgs = append(msgs, `{"role":"assistant","content":[{"type":"text","text":"reading the file"},{"type":"tool_use","id":"`+id+`","name":"read_file","input":{"path":"src/f.go"}}]}`,
			`{"role":"user","content":[{"type":"tool_result","tool_use_id":"`+id+`","content":"`+strings.Repeat(`package main\n\nfunc f() int { return 42 }\n`, 20)+`"}]}`)
	}
	doc := []byte("[" + strings.Join(msgs, ",") + "]")
	for _, fast := range []bool{false, true} {
		name := "1000/unmarshal"
		if fast {
			name = "1000/read"
		}
		b.Run(name, func(b *testing.B) {
			b.SetBytes(int64(len(doc)))
			for b.Loop() {
				var m []RequestMessage
				if !(fast && readMessages(doc, &m) || json.Unmarshal(doc, &m) == nil) || len(m) != 1000 {
					b.Fatal("not read")
				}
				for _, msg := range m {
					var blocks []RequestBlock
					if !(fast && readBlocks(msg.Content, &blocks) || json.Unmarshal(msg.Content, &blocks) == nil) {
						b.Fatal("blocks not read")
					}
				}
			}
		})
	}
}
