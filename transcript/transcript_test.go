package transcript

import (
	"bufio"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ctxhost/ctxhost/internal/shareddata"
	"github.com/ctxhost/ctxhost/sdk"
	"github.com/google/go-cmp/cmp"
)

// dataDir returns the reference data directory (../shared/data).
func dataDir(t *testing.T) string {
	t.Helper()
	return shareddata.Require(t)
}

func ptr[T any](v T) *T { return &v }

func TestLoadJSONL(t *testing.T) {
	tr, err := Load(filepath.Join("testdata", "session.jsonl"), "")
	if err != nil {
		t.Fatal(err)
	}
	want := &Transcript{Format: FormatJSONL, Events: []Event{
		{Line: 2, Type: EventSystem, Text: "You are a coding agent."},
		{Line: 3, Type: EventInstructions, Text: "Keep the plan current."},
		{Line: 6, Type: EventInput, Text: "Fix the failing test."},
		{Line: 7, Type: EventApply, Plugin: "plan", Op: "set_plan", Args: json.RawMessage(`{"steps":["read","fix"]}`)},
		{Line: 8, Type: EventMessage, Message: &sdk.Message{Role: "user", Content: "Fix the failing test.", Name: "ana", SpeakerType: "human"}},
		{Line: 9, Type: EventPrepare},
		{Line: 10, Type: EventMessage, Message: &sdk.Message{Role: "assistant",
			ToolCalls: []sdk.ToolCall{{ID: "c1", Name: "bash", Arguments: `{"cmd":"go test"}`}}}},
		{Line: 11, Type: EventToolOutput, ToolOutput: &ToolOutput{Tool: "bash", Output: "FAIL", ExitCode: ptr(1), CallID: "c1"}},
		{Line: 12, Type: EventMessage, Message: &sdk.Message{Role: "tool", Content: "FAIL", ToolCallID: "c1", ToolName: "bash",
			Metadata: map[string]string{"exit": "1"}}},
		{Line: 13, Type: EventUsage, Usage: &Usage{PromptTokens: 1200, CompletionTokens: 40}},
		{Line: 14, Type: EventApply, Plugin: "memory", Op: "clear", Args: json.RawMessage(`{}`)},
		{Line: 15, Type: EventTeamTask, Text: "Ship 1.2"},
		{Line: 16, Type: EventPrepare, Agent: "max"},
	}}
	if diff := cmp.Diff(want, tr); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

func TestJSONLErrors(t *testing.T) {
	good := `{"type":"system","text":"s"}` + "\n"
	tests := []struct {
		name, line, want string
	}{
		{"not JSON", `{"type":`, "invalid JSON: unexpected end of JSON input"},
		{"no type", `{"text":"x"}`, `missing "type"`},
		{"unknown type", `{"type":"shout","text":"x"}`, `unknown event type "shout"`},
		{"unknown field", `{"type":"input","text":"x","colour":"red"}`, `invalid JSON: unknown field "colour"`},
		{"unknown message field", `{"type":"message","role":"user","content":"x","mood":1}`, `unknown field "mood"`},
		{"wrong field type", `{"type":"usage","prompt_tokens":"1","completion_tokens":2}`, "cannot unmarshal string"},
		{"text missing", `{"type":"input"}`, `input event needs "text"`},
		{"content missing", `{"type":"message","role":"user"}`, `message event needs "content"`},
		{"bad role", `{"type":"message","role":"robot","content":"x"}`, `unknown role "robot"`},
		{"bad speaker", `{"type":"message","role":"user","content":"x","speaker_type":"cat"}`, `unknown speaker_type "cat"`},
		{"tool without call id", `{"type":"message","role":"tool","content":"x"}`, "tool message needs a tool_call_id"},
		{"undeclared call", `{"type":"message","role":"tool","content":"x","tool_call_id":"zz"}`, `tool result for call "zz", which no earlier assistant message declared`},
		{"calls on user", `{"type":"message","role":"user","content":"x","tool_calls":[{"id":"a","name":"b"}]}`, "only assistant messages carry tool_calls"},
		{"bad arguments", `{"type":"message","role":"assistant","content":"","tool_calls":[{"id":"a","name":"b","arguments":"{"}]}`, "arguments are not valid JSON"},
		{"apply without op", `{"type":"apply","plugin":"plan"}`, `apply event needs "plugin" and "op"`},
		{"apply args not object", `{"type":"apply","plugin":"plan","op":"x","args":[1]}`, `apply "args" must be a JSON object`},
		{"tool output without output", `{"type":"tool_output","tool":"bash"}`, `tool_output event needs "tool" and "output"`},
		{"negative usage", `{"type":"usage","prompt_tokens":-1,"completion_tokens":2}`, "must not be negative"},
		{"trailing data", `{"type":"prepare"} {"type":"prepare"}`, "invalid JSON: invalid character '{' after top-level value"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			data := good + "\n" + tt.line + "\n" + good
			tr, err := Parse("bad.jsonl", []byte(data), "")
			if err == nil {
				t.Fatalf("no error; got %d events", len(tr.Events))
			}
			if tr != nil {
				t.Error("a transcript was returned with the error")
			}
			if prefix := "bad.jsonl:3: "; !strings.HasPrefix(err.Error(), prefix) || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("error %q, want %q followed by %q", err, prefix, tt.want)
			}
		})
	}
}

func TestTrajectories(t *testing.T) {
	tests := []struct {
		file                      string
		messages, prepares, tools int
		firstMessageLine          int
	}{
		{"function_calling_simple.traj", 11, 5, 5, 9},
		{"marshmallow-1867_function_calling.traj", 23, 11, 11, 0},
		{"marshmallow-1867_function_calling_replace_from_source.traj", 27, 13, 13, 0},
		{"marshmallow-1867_xml_window100.traj", 22, 11, 0, 0},
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			tr, err := Load(filepath.Join(dataDir(t), "trajectories", tt.file), "")
			if err != nil {
				t.Fatal(err)
			}
			if tr.Format != FormatTraj {
				t.Errorf("format %q", tr.Format)
			}
			got := map[string]int{}
			for _, e := range tr.Events {
				got[e.Type]++
			}
			want := map[string]int{EventSystem: 1, EventMessage: tt.messages, EventPrepare: tt.prepares}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("event counts (-want +got):\n%s", diff)
			}
			if tr.Events[0].Type != EventSystem || !strings.HasPrefix(tr.Events[0].Text, "SETTING: You are an autonomous programmer") {
				t.Errorf("first event %+v", tr.Events[0])
			}
			if tt.firstMessageLine != 0 && tr.Events[1].Line != tt.firstMessageLine {
				t.Errorf("first message on line %d, want %d", tr.Events[1].Line, tt.firstMessageLine)
			}
			checkCalls(t, tr, tt.tools)
		})
	}
}

// checkCalls asserts that every tool message answers a call an earlier
// assistant message declared (with its tool name), that a prepare precedes
// every assistant message and that lines increase.
func checkCalls(t *testing.T, tr *Transcript, wantTools int) {
	t.Helper()
	declared := map[string]string{}
	tools, line := 0, 0
	for i, e := range tr.Events {
		if e.Line < line {
			t.Errorf("event %d: line %d after line %d", i, e.Line, line)
		}
		line = e.Line
		if e.Type != EventMessage {
			continue
		}
		m := e.Message
		switch m.Role {
		case sdk.RoleAssistant:
			if i == 0 || tr.Events[i-1].Type != EventPrepare {
				t.Errorf("event %d: assistant message without a prepare before it", i)
			}
			for _, c := range m.ToolCalls {
				declared[c.ID] = c.Name
			}
		case sdk.RoleTool:
			tools++
			name, ok := declared[m.ToolCallID]
			if !ok || m.ToolName != name || name == "" {
				t.Errorf("event %d: tool result %q (tool %q) not declared before (declared %q)", i, m.ToolCallID, m.ToolName, name)
			}
		}
	}
	if tools != wantTools {
		t.Errorf("%d tool messages, want %d", tools, wantTools)
	}
}

func TestTrajToolCallIDs(t *testing.T) {
	head := `{"history":[{"role":"system","content":"sys"},{"role":"assistant","content":"go","tool_calls":[` +
		`{"id":"a","type":"function","function":{"name":"ls","arguments":"{}"}},` +
		`{"id":"b","type":"function","function":{"name":"cat","arguments":{"path":"x"}}}]},`
	tests := []struct {
		name, tool string
		want       []*sdk.Message // tool messages
		err        string
	}{
		{"one id", `{"role":"tool","content":"out","tool_call_ids":["a"]}`,
			[]*sdk.Message{{Role: "tool", Content: "out", ToolCallID: "a", ToolName: "ls"}}, ""},
		{"several ids split", `{"role":"tool","content":"out","tool_call_ids":["a","b"]}`,
			[]*sdk.Message{
				{Role: "tool", Content: "out", ToolCallID: "a", ToolName: "ls"},
				{Role: "tool", Content: "(output shared with tool call a)", ToolCallID: "b", ToolName: "cat"},
			}, ""},
		{"empty list", `{"role":"tool","content":"out","tool_call_ids":[]}`, nil, "x.traj:1: tool message has an empty tool_call_ids list"},
		{"undeclared", `{"role":"tool","content":"out","tool_call_ids":["q"]}`, nil, `x.traj:1: tool result for call "q"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tr, err := Parse("x.traj", []byte(head+tt.tool+`]}`), "")
			if tt.err != "" {
				if err == nil || !strings.HasPrefix(err.Error(), tt.err) {
					t.Fatalf("error %v, want %q", err, tt.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			var got []*sdk.Message
			for _, e := range tr.Events {
				if e.Type == EventMessage && e.Message.Role == sdk.RoleTool {
					got = append(got, e.Message)
				}
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
			if args := tr.Events[2].Message.ToolCalls[1].Arguments; args != `{"path":"x"}` {
				t.Errorf("object arguments kept as %q", args)
			}
		})
	}
}

func TestOpenAI(t *testing.T) {
	const list = `[
  {"role": "system", "content": "sys"},
  {"role": "developer", "content": [{"type": "text", "text": "dev"}]},
  {"role": "user", "content": [{"type": "text", "text": "a"}, {"type": "text", "text": "b"}], "name": "ana"},
  {"role": "assistant", "content": null, "tool_calls": [{"id": "c", "type": "function", "function": {"name": "ls", "arguments": "{}"}}]},
  {"role": "tool", "tool_call_id": "c", "content": "x.go"},
  {"role": "system", "content": "late"},
  {"role": "assistant", "content": "done", "refusal": null}
]`
	want := []Event{
		{Line: 2, Type: EventSystem, Text: "sys\n\ndev"},
		{Line: 4, Type: EventMessage, Message: &sdk.Message{Role: "user", Content: "a\nb", Name: "ana"}},
		{Line: 5, Type: EventPrepare},
		{Line: 5, Type: EventMessage, Message: &sdk.Message{Role: "assistant",
			ToolCalls: []sdk.ToolCall{{ID: "c", Name: "ls", Arguments: "{}"}}}},
		{Line: 6, Type: EventMessage, Message: &sdk.Message{Role: "tool", Content: "x.go", ToolCallID: "c", ToolName: "ls"}},
		{Line: 7, Type: EventMessage, Message: &sdk.Message{Role: "system", Content: "late"}},
		{Line: 8, Type: EventPrepare},
		{Line: 8, Type: EventMessage, Message: &sdk.Message{Role: "assistant", Content: "done"}},
	}
	for _, tc := range []struct{ name, data string }{
		{"chat.json", list},
		{"log.txt", list},
		{"chat.json", "{\"messages\":" + list + "}"},
	} {
		tr, err := Parse(tc.name, []byte(tc.data), "")
		if err != nil {
			t.Fatal(err)
		}
		if tr.Format != FormatOpenAI {
			t.Errorf("%s: format %q", tc.name, tr.Format)
		}
		if diff := cmp.Diff(want, tr.Events); diff != "" {
			t.Errorf("%s (-want +got):\n%s", tc.name, diff)
		}
	}
}

func TestOpenAIErrors(t *testing.T) {
	tests := []struct{ name, data, want string }{
		{"syntax", "[\n{\"role\":\"user\",\n\"content\": }\n]", "c.json:3: invalid JSON"},
		{"image part without url", "[\n{\"role\":\"user\",\"content\":[{\"type\":\"image_url\"}]}\n]", `c.json:2: content part 0: image_url part without image_url`},
		{"audio part", "[\n{\"role\":\"user\",\"content\":[{\"type\":\"input_audio\"}]}\n]", `c.json:2: content part 0: unsupported part type "input_audio"`},
		{"bad data url", "[\n{\"role\":\"user\",\"content\":[{\"type\":\"image_url\",\"image_url\":{\"url\":\"data:image/png,xx\"}}]}\n]", `c.json:2: content part 0: a data: URL must be base64`},
		{"bad role", "[\n{\"role\":\"user\",\"content\":\"a\"},\n{\"role\":\"robot\",\"content\":\"a\"}]", `c.json:3: unknown role "robot"`},
		{"no messages", `{"model":"x"}`, `c.json: no "messages" list`},
		{"messages not a list", `{"messages":{}}`, `c.json: "messages" must be a list`},
		{"unknown format", `[]`, `unknown transcript format "yaml"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			format := ""
			if tt.name == "unknown format" {
				format = "yaml"
			}
			_, err := Parse("c.json", []byte(tt.data), format)
			if err == nil || !strings.HasPrefix(err.Error(), tt.want) {
				t.Errorf("error %v, want prefix %q", err, tt.want)
			}
		})
	}
}

func TestDetect(t *testing.T) {
	tests := []struct{ name, data, want string }{
		{"a.jsonl", `{"history":[]}`, FormatJSONL},
		{"a.traj", `[]`, FormatTraj},
		{"a.json", `{}`, FormatOpenAI},
		{"a.log", ` [ ]`, FormatOpenAI},
		{"a.log", `{"history":[]}`, FormatTraj},
		{"a.log", `{"messages":[]}`, FormatOpenAI},
		{"a.log", "{\"type\":\"prepare\"}\n{\"type\":\"prepare\"}", FormatJSONL},
	}
	for _, tt := range tests {
		if got := detectStream(tt.name, bufio.NewReader(strings.NewReader(tt.data))); got != tt.want {
			t.Errorf("detect(%s, %s) = %s, want %s", tt.name, tt.data, got, tt.want)
		}
	}
}

func TestMessages(t *testing.T) {
	data := `{"type":"system","text":"be brief"}
{"type":"instructions","text":"use Go"}
{"type":"message","role":"user","content":"list files"}
{"type":"prepare"}
{"type":"message","role":"assistant","content":"","tool_calls":[{"id":"c1","name":"bash","arguments":"{}"}]}
{"type":"message","role":"tool","content":"a.go","tool_call_id":"c1"}
{"type":"usage","prompt_tokens":10,"completion_tokens":2}
{"type":"input","text":"go on"}
`
	tr, err := Parse("x.jsonl", []byte(data), FormatJSONL)
	if err != nil {
		t.Fatal(err)
	}
	want := []sdk.Message{
		{Role: sdk.RoleSystem, Content: "be brief"},
		{Role: sdk.RoleUser, Content: "list files"},
		{Role: sdk.RoleAssistant, ToolCalls: []sdk.ToolCall{{ID: "c1", Name: "bash", Arguments: "{}"}}},
		{Role: sdk.RoleTool, Content: "a.go", ToolCallID: "c1", ToolName: "bash"},
	}
	got := tr.Messages()
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Messages (-want +got):\n%s", diff)
	}
	got[1].Content = "changed"
	if tr.Events[2].Message.Content != "list files" {
		t.Error("Messages shares its messages with the events")
	}
}

// TestTrajKinds: SWE-agent's message_type decides the kind; the first user
// message after the demonstrations is the task whatever its message_type.
func TestTrajKinds(t *testing.T) {
	const traj = `{"history": [
  {"role": "system", "content": "sys", "message_type": "system_prompt"},
  {"role": "user", "content": "demo", "message_type": "demonstration", "is_demo": true},
  {"role": "user", "content": "the issue", "message_type": "observation"},
  {"role": "assistant", "content": "look", "message_type": "action"},
  {"role": "user", "content": "output", "message_type": "observation"},
  {"role": "assistant", "content": "think", "message_type": "thought"}
]}`
	tr, err := Parse("run.traj", []byte(traj), "")
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, ev := range tr.Events {
		if ev.Message != nil {
			got = append(got, ev.Message.Kind)
		}
	}
	want := []string{sdk.KindDemonstration, sdk.KindTask, sdk.KindAction, sdk.KindObservation, ""}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("kinds (-want +got):\n%s", diff)
	}
}

// TestJSONLKindAndPin: a message line may say its kind and pin itself; an
// unknown kind is a line error.
func TestJSONLKindAndPin(t *testing.T) {
	tr, err := Parse("s.jsonl", []byte(`{"type":"message","role":"user","content":"x","kind":"instruction","pin":true}`), "")
	if err != nil {
		t.Fatal(err)
	}
	if m := tr.Events[0].Message; m.Kind != sdk.KindInstruction || !m.Pinned {
		t.Errorf("message %+v, want kind instruction, pinned", m)
	}
	_, err = Parse("s.jsonl", []byte(`{"type":"message","role":"user","content":"x","kind":"rumour"}`), "")
	if err == nil || !strings.Contains(err.Error(), `s.jsonl:1: unknown message kind "rumour"`) {
		t.Errorf("err = %v, want a line error naming the kind", err)
	}
}

// TestOpenAIParts: images (data: URLs and links), files and Anthropic's
// image, document and thinking blocks become content parts; a list of
// text parts stays one text.
func TestOpenAIParts(t *testing.T) {
	data := `[
  {"role": "user", "content": [{"type": "text", "text": "see"}, {"type": "image_url", "image_url": {"url": "data:image/png;base64,iVBORw==", "detail": "low"}},
    {"type": "image_url", "image_url": {"url": "https://example.com/a.png"}}, {"type": "file", "file": {"filename": "s.pdf", "file_data": "data:application/pdf;base64,JVBERg=="}}]},
  {"role": "assistant", "content": [{"type": "thinking", "thinking": "hmm", "signature": "sig"}, {"type": "text", "text": "ok"}]},
  {"role": "user", "content": [{"type": "text", "text": "a"}, {"type": "text", "text": "b"}]}
]`
	tr, err := Parse("c.json", []byte(data), FormatOpenAI)
	if err != nil {
		t.Fatal(err)
	}
	msgs := tr.Messages()
	want := []sdk.Message{
		{Role: "user", Parts: []sdk.Part{{Type: sdk.PartText, Text: "see"},
			{Type: sdk.PartImage, MediaType: "image/png", Data: []byte{0x89, 'P', 'N', 'G'}, Detail: "low"},
			{Type: sdk.PartImage, URL: "https://example.com/a.png"},
			{Type: sdk.PartDocument, Title: "s.pdf", MediaType: "application/pdf", Data: []byte("%PDF")}}},
		{Role: "assistant", Parts: []sdk.Part{{Type: sdk.PartThinking, Text: "hmm", Signature: "sig", Provider: "anthropic"}, {Type: sdk.PartText, Text: "ok"}}},
		{Role: "user", Content: "a\nb"},
	}
	if diff := cmp.Diff(want, msgs); diff != "" {
		t.Errorf("messages (-want +got):\n%s", diff)
	}
}
