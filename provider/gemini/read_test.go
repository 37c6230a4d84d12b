package gemini

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/ctxhost/ctxhost/provider/jsontest"
)

// answers are GenerateContentResponses as the API documents them: whole
// and streamed text, a function call with its signature, thoughts,
// inline data, code execution's parts (kept whole), an error.
var answers = []string{
	`{"candidates":[{"content":{"parts":[{"text":"Hello \"there\" caf\u00e9 😀\n"}],"role":"model"},"finishReason":"STOP","index":0,"safetyRatings":[{"category":"HARM_CATEGORY_SEXUALLY_EXPLICIT","probability":"NEGLIGIBLE"}]}],"usageMetadata":{"promptTokenCount":4,"candidatesTokenCount":1,"totalTokenCount":5,"promptTokensDetails":[{"modality":"TEXT","tokenCount":4}]},"modelVersion":"gemini-2.5-flash","responseId":"mcN7aLSeEpT9qsMP3NbUiA0"}`,
	`{"candidates": [{"content": {"parts": [{"text": " world"}],"role": "model"},"index": 0}],"usageMetadata": {"promptTokenCount": 4,"totalTokenCount": 4},"modelVersion": "gemini-2.5-flash"}`,
	`{"candidates":[{"content":{"parts":[{"functionCall":{"name":"get_weather","args":{"location":"Boston","days":[1,2.5]}},"thoughtSignature":"CiQB0e2Kb7"}],"role":"model"},"finishReason":"STOP"}],"usageMetadata":{"promptTokenCount":70,"candidatesTokenCount":15,"thoughtsTokenCount":40,"cachedContentTokenCount":32}}`,
	`{"candidates":[{"content":{"parts":[{"text":"**Weighing the options**","thought":true},{"text":"answer"},{"inlineData":{"mimeType":"image/png","data":"iVBORw0KGgo="}},{"fileData":{"mimeType":"application/pdf","fileUri":"gs://b/a.pdf"}}],"role":"model"}}]}`,
	`{"candidates":[{"content":{"parts":[{"executableCode":{"language":"PYTHON","code":"print(1)"}},{"codeExecutionResult":{"outcome":"OUTCOME_OK","output":"1\n"}}],"role":"model"}}]}`,
	`{"candidates":[{"content":{"parts":[{"functionResponse":{"id":"c","name":"n","response":{"ok":true}}}],"role":"user"},"finishReason":null}],"usageMetadata":null}`,
	`{"error":{"code":429,"message":"Resource has been exhausted","status":"RESOURCE_EXHAUSTED"}}`,
}

// requests are a request's contents: text, a function call and its
// response, inline and file data, a part kept whole.
var requests = []string{
	`[{"role":"user","parts":[{"text":"What is the weather in Paris? \u00e9"}]},{"role":"model","parts":[{"text":"checking","thought":true},{"functionCall":{"name":"get_weather","args":{"city":"Paris"}},"thoughtSignature":"CiQB"}]},{"role":"user","parts":[{"functionResponse":{"name":"get_weather","response":{"temp":18}}},{"inlineData":{"mimeType":"image/png","data":"iVBORw0KGgo="}},{"fileData":{"mimeType":"application/pdf","fileUri":"gs://b/a.pdf"}}]}]`,
	`[{"role":"model","parts":[{"executableCode":{"language":"PYTHON","code":"print(1)"}}]}]`,
}

// TestReadAsUnmarshal: the one-pass readers of a response and of a
// request's contents read the documents above and 300 variants of each (keys in other cases or
// twice, members dropped, values of other types, escapes, surrogates,
// invalid UTF-8) as json.Unmarshal reads them, or declines them; it
// declines none of the documents as they came but those with parts kept
// whole.
func TestReadAsUnmarshal(t *testing.T) {
	var docs [][]byte
	for _, a := range append(append([]string{}, answers...), requests...) {
		docs = append(docs, []byte(a))
	}
	all := jsontest.AllVariants(t, docs, 150, 0.05, 0.3)
	declined := 0
	for _, doc := range all {
		if jsontest.SameAsUnmarshal(t, doc, readResponse) {
			declined++
		}
		if jsontest.SameAsUnmarshal(t, doc, readContents) {
			declined++
		}
	}
	if jsontest.SameAsUnmarshal(t, []byte(requests[0]), readContents) || !jsontest.SameAsUnmarshal(t, []byte(requests[1]), readContents) {
		t.Error("requests read or declined as they should not")
	}
	t.Logf("%d documents: %d declined that json.Unmarshal reads", len(all), declined)
	for _, a := range answers {
		if readResponse([]byte(a), &response{}) == strings.Contains(a, "executableCode") {
			t.Errorf("read or declined as it should not %s", a)
		}
	}
}

// FuzzReadResponse: whatever the document, readResponse and readContents
// read it as json.Unmarshal does or decline it.
func FuzzReadResponse(f *testing.F) {
	for _, a := range answers {
		f.Add([]byte(a))
	}
	for _, a := range requests {
		f.Add([]byte(a))
	}
	f.Fuzz(func(t *testing.T, doc []byte) {
		jsontest.SameAsUnmarshal(t, doc, readResponse)
		jsontest.SameAsUnmarshal(t, doc, readContents)
	})
}

// BenchmarkRead reads a streamed chunk of 4 KB of text in one pass
// (read) and by json.Unmarshal (unmarshal), in one run.
func BenchmarkRead(b *testing.B) {
	doc := []byte(`{"candidates":[{"content":{"parts":[{"text":"` + strings.Repeat("delta text ", 370) + `"}],"role":"model"},"index":0}],"usageMetadata":{"promptTokenCount":4,"totalTokenCount":4},"modelVersion":"gemini-2.5-flash"}`)
	for _, fast := range []bool{false, true} {
		name := "unmarshal"
		if fast {
			name = "read"
		}
		b.Run("chunk-4KB/"+name, func(b *testing.B) {
			b.SetBytes(int64(len(doc)))
			b.ReportAllocs()
			for b.Loop() {
				var res response
				if !(fast && readResponse(doc, &res) || json.Unmarshal(doc, &res) == nil) {
					b.Fatal("not read")
				}
			}
		})
	}
}

// BenchmarkReadContents reads a request of 1,000 contents (500 function
// calls and their responses) in one pass (read) and by json.Unmarshal
// (unmarshal), in one run.
func BenchmarkReadContents(b *testing.B) {
	var cs []string
	for range 500 {
		cs = append(cs, `{"role":"model","parts":[{"text":"reading the file"},{"functionCall":{"name":"read_file","args":{"path":"src/f.go"}}}]}`,
			`{"role":"user","parts":[{"functionResponse":{"name":"read_file","response":{"content":"`+strings.Repeat(`package main\n\nfunc f() int { return 42 }\n`, 20)+`"}}}]}`)
	}
	doc := []byte("[" + strings.Join(cs, ",") + "]")
	for _, fast := range []bool{false, true} {
		name := "1000/unmarshal"
		if fast {
			name = "1000/read"
		}
		b.Run(name, func(b *testing.B) {
			b.SetBytes(int64(len(doc)))
			for b.Loop() {
				var c []RequestContent
				if !(fast && readContents(doc, &c) || json.Unmarshal(doc, &c) == nil) || len(c) != 1000 {
					b.Fatal("not read")
				}
			}
		})
	}
}
