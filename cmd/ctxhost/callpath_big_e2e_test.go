package main

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/http"
	"regexp"
	"strings"
	"testing"
)

// bigText is the stand-in's text of a big-text- task's answer (its
// BigText, written again here: the test checks the call path against the
// stand-in, not against itself): whole lines while they fit in n bytes.
func bigText(n int) string {
	var b strings.Builder
	for i := 0; ; i++ {
		line := fmt.Sprintf("line %07d: the \"quick\" brown fox jumps over the lazy dog \\ naïve café → done\n", i)
		if b.Len()+len(line) > n {
			return b.String()
		}
		b.WriteString(line)
	}
}

// bigArgs is the stand-in's arguments of a big-args- task's apply_patch
// call: {"patch": bigText(n)} as canonical JSON.
func bigArgs(n int) string {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(map[string]string{"patch": bigText(n)})
	return strings.TrimSuffix(b.String(), "\n")
}

// firstCall is the first call of task on endpoint: its path, headers and
// body.
func firstCall(endpoint, task string, stream bool) (string, map[string]string, string) {
	s := fmt.Sprint(stream)
	bearer := map[string]string{"Authorization": "Bearer " + standinKey}
	prompt := "TASK-ID: " + task + ". Write it all out."
	switch endpoint {
	case "chat":
		return "/v1/chat/completions", bearer, `{"model":"gpt-4.1","stream":` + s + `,"messages":[{"role":"user","content":"` + prompt + `"}]}`
	case "responses":
		return "/v1/responses", bearer, `{"model":"gpt-4.1","stream":` + s + `,"store":false,"input":[{"role":"user","content":"` + prompt + `"}]}`
	case "anthropic":
		return "/v1/messages", anthropicKey, `{"model":"claude-haiku-4-5","max_tokens":64000,"stream":` + s + `,"messages":[{"role":"user","content":"` + prompt + `"}]}`
	}
	path := "/v1beta/models/gemini-2.5-pro:generateContent"
	if stream {
		path = "/v1beta/models/gemini-2.5-pro:streamGenerateContent?alt=sse"
	}
	return path, map[string]string{"x-goog-api-key": standinKey}, `{"contents":[{"role":"user","parts":[{"text":"` + prompt + `"}]}]}`
}

// answerID finds an answer's id: a completion's, a response's or a
// message's (the stand-in's chatcmpl-, resp_ and msg_ ids; a tool call's
// id is none of them), or Gemini's responseId.
var answerID = regexp.MustCompile(`"(?:id":"((?:chatcmpl-|resp_|msg_)[^"]+)|responseId":"([^"]+))"`)

// TestCallPathBigAnswers: an answer of a 1 MB text, and one with a tool
// call of 200 KB of arguments, through every endpoint (Chat Completions,
// Responses, Anthropic Messages, Gemini), whole and streamed (a stream's
// text and arguments come in two deltas, lines of half a megabyte, and a
// Responses stream ends with an event carrying all of it): the caller
// gets the stand-in's answer byte for byte (its length and SHA-256 as the
// stand-in logged them), each answer has an id of its own, and the session
// recorded the text and the arguments whole.
func TestCallPathBigAnswers(t *testing.T) {
	if testing.Short() {
		t.Skip("slow: make test runs it, make test-short (-short) leaves it out")
	}
	si, srv, _ := startCallPath(t, 3, "")
	base := "http://" + srv.addr
	const textBytes, argsBytes = 1 << 20, 200 << 10 // the stand-in's BigTextBytes, BigArgsBytes
	text, args := bigText(textBytes), bigArgs(argsBytes)
	type result struct {
		task, session string
		sum           string
		n             int
	}
	var results []result
	ids := map[string]string{} // answer id -> task: no two answers share one
	for _, endpoint := range []string{"chat", "responses", "anthropic", "gemini"} {
		for _, stream := range []bool{false, true} {
			for _, kind := range []string{"big-text", "big-args"} {
				task := fmt.Sprintf("%s-%s-stream-%v", kind, endpoint, stream)
				path, header, body := firstCall(endpoint, task, stream)
				code, h, got, err := post(t, base+path, header, body)
				if err != nil || code != http.StatusOK {
					t.Errorf("%s: HTTP %d %v %.300s", task, code, err, got)
					continue
				}
				if m := answerID.FindStringSubmatch(got); m == nil || ids[m[1]+m[2]] != "" {
					t.Errorf("%s: the answer's id %q is missing or another answer's", task, m)
				} else {
					ids[m[1]+m[2]] = task
				}
				sum := sha256.Sum256([]byte(got))
				results = append(results, result{task, h.Get("Ctxhost-Session"), hex.EncodeToString(sum[:]), len(got)})
			}
		}
	}
	checks := si.checks(t)
	for _, r := range results {
		cs := checks[r.task]
		if len(cs) != 1 {
			t.Errorf("%s: the stand-in saw %d requests, want 1", r.task, len(cs))
			continue
		}
		if c := cs[0]; c.AnswerSHA256 != r.sum || c.AnswerBytes != r.n {
			t.Errorf("%s: the caller got %d bytes (SHA-256 %s), the stand-in sent %d (%s)", r.task, r.n, r.sum, c.AnswerBytes, c.AnswerSHA256)
		}
		code, out, _ := call(t, srv.addr, "", "GetHistory", `{"session_id":"`+r.session+`"}`)
		if code != 200 {
			t.Fatalf("GetHistory %s: HTTP %d %v", r.session, code, out)
		}
		var hist struct {
			Entries []struct {
				Message struct {
					Role    string `json:"role"`
					Content string `json:"content"`
					Parts   []struct {
						Type string `json:"type"`
						Text string `json:"text"`
					} `json:"parts"`
					ToolCalls []struct {
						Name      string `json:"name"`
						Arguments string `json:"arguments"`
					} `json:"toolCalls"`
				} `json:"message"`
			} `json:"entries"`
		}
		raw, _ := json.Marshal(out)
		if err := json.Unmarshal(raw, &hist); err != nil || len(hist.Entries) != 2 {
			t.Errorf("%s: the session holds %d messages (%v), want the task and the answer", r.task, len(hist.Entries), err)
			continue
		}
		m := hist.Entries[1].Message
		wantText, wantArgs := text, ""
		if strings.HasPrefix(r.task, "big-args") {
			wantText, wantArgs = "Applying the patch.", args
		}
		for _, p := range m.Parts { // a message with reasoning holds its text as parts
			if p.Type == "text" {
				m.Content += p.Text
			}
		}
		if m.Role != "assistant" || m.Content != wantText {
			t.Errorf("%s: recorded a %s message of %d bytes, want the answer's %d", r.task, m.Role, len(m.Content), len(wantText))
		}
		if wantArgs != "" && (len(m.ToolCalls) != 1 || m.ToolCalls[0].Name != "apply_patch" || m.ToolCalls[0].Arguments != wantArgs) {
			n := 0
			if len(m.ToolCalls) > 0 {
				n = len(m.ToolCalls[0].Arguments)
			}
			t.Errorf("%s: recorded %d tool calls (the first with %d bytes of arguments), want apply_patch with %d", r.task, len(m.ToolCalls), n, len(wantArgs))
		}
	}
}
