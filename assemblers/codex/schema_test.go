package codex

import (
	"bytes"
	"encoding/json"
	"github.com/ctxhost/ctxhost/provider/openai"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/ctxhost/ctxhost/sdk"
	"github.com/ctxhost/ctxhost/sdk/assembly/assemblytest"
	"github.com/santhosh-tekuri/jsonschema/v6"
)

var (
	schemaOnce sync.Once
	schema     *jsonschema.Schema
	schemaErr  error
)

// chatCompletionSchema compiles CreateChatCompletionRequest out of the
// OpenAI OpenAPI 3.1 document (loaded whole as one resource, so its
// #/components/schemas references resolve), once per test binary.
func chatCompletionSchema(t *testing.T) *jsonschema.Schema {
	t.Helper()
	path := filepath.Join(assemblytest.DataDir(t), "schemas", "openai-openapi.json")
	schemaOnce.Do(func() {
		f, err := os.Open(path)
		if err != nil {
			schemaErr = err
			return
		}
		defer f.Close()
		doc, err := jsonschema.UnmarshalJSON(f)
		if err != nil {
			schemaErr = err
			return
		}
		const url = "file:///openai-openapi.json"
		c := jsonschema.NewCompiler()
		c.DefaultDraft(jsonschema.Draft2020)
		if schemaErr = c.AddResource(url, doc); schemaErr != nil {
			return
		}
		schema, schemaErr = c.Compile(url + "#/components/schemas/CreateChatCompletionRequest")
	})
	if schemaErr != nil {
		t.Fatalf("compile CreateChatCompletionRequest from %s: %v", path, schemaErr)
	}
	return schema
}

// validate fails the test when payload does not validate against
// CreateChatCompletionRequest.
func validate(t *testing.T, payload []byte) {
	t.Helper()
	inst, err := jsonschema.UnmarshalJSON(bytes.NewReader(payload))
	if err != nil {
		t.Fatalf("payload is not JSON: %v", err)
	}
	if err := chatCompletionSchema(t).Validate(inst); err != nil {
		t.Errorf("payload does not validate against CreateChatCompletionRequest: %v\n%s", err, payload)
	}
	checkToolPairs(t, payload)
}

// checkToolPairs fails the test when a tool message does not answer a call
// of the assistant message before it (possibly after other tool messages),
// which the API rejects and the schema cannot express.
func checkToolPairs(t *testing.T, payload []byte) {
	t.Helper()
	var body openai.Request
	if err := json.Unmarshal(payload, &body); err != nil {
		t.Fatalf("decode payload: %v", err)
	}
	open := map[string]bool{}
	for i, m := range body.Messages {
		switch m.Role {
		case "assistant":
			open = map[string]bool{}
			for _, tc := range m.ToolCalls {
				open[tc.ID] = true
			}
		case "tool":
			if m.ToolCallID == nil || !open[*m.ToolCallID] {
				t.Errorf("message %d: tool message does not answer a call of the assistant message before it", i)
			}
		default:
			open = map[string]bool{}
		}
	}
}

// TestSchemaRejectsInvalid makes sure the validator has teeth: bodies that
// break the schema are rejected.
func TestSchemaRejectsInvalid(t *testing.T) {
	s := chatCompletionSchema(t)
	for _, body := range []string{
		`{"model":"gpt-4.1","messages":[]}`,
		`{"model":"gpt-4.1","messages":[{"role":"tool","content":"x"}]}`,
		`{"model":"gpt-4.1","messages":[{"role":"robot","content":"x"}]}`,
		`{"messages":[{"role":"user","content":"x"}]}`,
	} {
		inst, err := jsonschema.UnmarshalJSON(bytes.NewReader([]byte(body)))
		if err != nil {
			t.Fatal(err)
		}
		if s.Validate(inst) == nil {
			t.Errorf("schema accepted invalid body %s", body)
		}
	}
}

// TestTrajectoriesValidate builds api payloads from every reference
// trajectory and validates them against CreateChatCompletionRequest.
func TestTrajectoriesValidate(t *testing.T) {
	for _, tr := range assemblytest.Trajectories(t) {
		t.Run(tr.Name, func(t *testing.T) {
			validate(t, assemble(t, tr.Request(), FormatAPI).Payload)
		})
	}
}

// TestPromptCacheKey: the prompt_cache_key option is sent as the request
// field of that name, which the published schema accepts; unset, the field
// is left out.
func TestPromptCacheKey(t *testing.T) {
	req := sdk.AssembleRequest{Components: []sdk.Component{{Name: sdk.ComponentInput, Slot: sdk.SlotInput, Text: "hi"}},
		Options: map[string]string{OptionPromptCacheKey: "session-42"}}
	payload := assemble(t, req, FormatAPI).Payload
	validate(t, payload)
	if !bytes.Contains(payload, []byte(`"prompt_cache_key":"session-42"`)) {
		t.Errorf("payload %s lacks the prompt_cache_key", payload)
	}
	req.Options = nil
	if payload := assemble(t, req, FormatAPI).Payload; bytes.Contains(payload, []byte("prompt_cache_key")) {
		t.Errorf("payload %s carries a prompt_cache_key nobody set", payload)
	}
}
