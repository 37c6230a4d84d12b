package main

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// request sends method to url with header and returns the status and
// body.
func request(t *testing.T, method, url string, header map[string]string) (int, string) {
	t.Helper()
	req, _ := http.NewRequest(method, url, nil)
	for k, v := range header {
		req.Header.Set(k, v)
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	return res.StatusCode, string(b)
}

// TestCallPathStoredResponses: a Responses answer given with store on is
// recorded with its session. GET /v1/responses/{id} answers with the
// response object as the provider gave it and DELETE with OpenAI's
// deletion object, after which the response is 404 in OpenAI's shape;
// after a restart (a new process over the same store) a call that names
// its session resolves an item_reference and previous_response_id to what
// that session recorded, and GET still finds the response; a response
// stored with store false is never found.
func TestCallPathStoredResponses(t *testing.T) {
	up := &recordingUpstream{}
	ts := httptest.NewServer(up)
	t.Cleanup(ts.Close)
	dir := t.TempDir()
	cfg := filepath.Join(dir, "callpath.hcl")
	if err := os.WriteFile(cfg, []byte(fmt.Sprintf(callPathHCL, binDir, ts.URL, filepath.Join(dir, "store"), "")), 0o600); err != nil {
		t.Fatal(err)
	}
	srv := startServe(t, nil, "-config", cfg)
	const session = "stored-responses"
	key := map[string]string{"Authorization": "Bearer " + standinKey, "Ctxhost-Session": session}
	user := `{"role":"user","content":"TASK-ID: stored-1. First question."}`
	code, _, first, err := post(t, "http://"+srv.addr+"/v1/responses", key, `{"model":"gpt-4o","input":[`+user+`]}`)
	if err != nil || code != 200 {
		t.Fatalf("first call: %d %s %v", code, first, err)
	}
	var resp struct {
		ID     string `json:"id"`
		Output []struct {
			ID string `json:"id"`
		} `json:"output"`
	}
	if err := json.Unmarshal([]byte(first), &resp); err != nil || resp.ID == "" || len(resp.Output) != 1 {
		t.Fatalf("first answer %s", first)
	}
	get := func(base, id string, header map[string]string) (int, string) {
		return request(t, http.MethodGet, base+"/v1/responses/"+id, header)
	}
	if code, body := get("http://"+srv.addr, resp.ID, map[string]string{"Authorization": "Bearer " + standinKey}); code != 200 || canonical(t, body) != canonical(t, first) {
		t.Errorf("GET %s: %d %s, want the answer %s", resp.ID, code, body, first)
	}
	other := map[string]string{"Authorization": "Bearer " + standinKey, "Ctxhost-Session": session + "-unstored"}
	code, _, unstored, err := post(t, "http://"+srv.addr+"/v1/responses", other,
		`{"model":"gpt-4o","store":false,"input":[{"role":"user","content":"TASK-ID: stored-2. Not stored."}]}`)
	var un struct {
		ID string `json:"id"`
	}
	if err != nil || code != 200 || json.Unmarshal([]byte(unstored), &un) != nil {
		t.Fatalf("store false: %d %s %v", code, unstored, err)
	}
	if code, body := get("http://"+srv.addr, un.ID, other); code != 404 || !strings.Contains(body, `"type":"invalid_request_error"`) {
		t.Errorf("GET of a response stored with store false: %d %s", code, body)
	}

	srv.stop(t)
	srv = startServe(t, nil, "-config", cfg)
	base := "http://" + srv.addr
	if code, body := get(base, resp.ID, key); code != 200 || canonical(t, body) != canonical(t, first) {
		t.Errorf("GET %s after a restart: %d %s", resp.ID, code, body)
	}
	code, h, out, err := post(t, base+"/v1/responses", key,
		`{"model":"gpt-4o","input":[`+user+`,{"type":"item_reference","id":"`+resp.Output[0].ID+`"},{"role":"user","content":"Second question."}]}`)
	if err != nil || code != 200 {
		t.Fatalf("item_reference after a restart: %d %s %v", code, out, err)
	}
	if got := inputTexts(up.last()); len(got) != 3 || got[1] != "assistant: answer 1" {
		t.Errorf("item_reference after a restart went upstream as %q", got)
	}
	if h.Get("Ctxhost-History") != "" {
		t.Errorf("item_reference after a restart: the history was %s", h.Get("Ctxhost-History"))
	}
	code, _, out, err = post(t, base+"/v1/responses", key, `{"model":"gpt-4o","previous_response_id":"`+resp.ID+`","input":[{"role":"user","content":"Third."}]}`)
	if err != nil || code != 200 {
		t.Fatalf("previous_response_id after a restart: %d %s %v", code, out, err)
	}
	if got := inputTexts(up.last()); len(got) != 3 || !strings.HasPrefix(got[0], "user: TASK-ID: stored-1") || got[2] != "user: Third." {
		t.Errorf("previous_response_id after a restart went upstream as %q", got)
	}
	if code, body := request(t, http.MethodDelete, base+"/v1/responses/"+resp.ID, key); code != 200 || !strings.Contains(body, `"deleted":true`) {
		t.Errorf("DELETE: %d %s", code, body)
	}
	if code, body := get(base, resp.ID, key); code != 404 || !strings.Contains(body, "not found") {
		t.Errorf("GET after DELETE: %d %s", code, body)
	}
	if code, body := get(base, "resp_unknown", map[string]string{"Authorization": "Bearer " + standinKey}); code != 404 || !strings.Contains(body, `"error"`) {
		t.Errorf("GET of an unknown response: %d %s", code, body)
	}
}
