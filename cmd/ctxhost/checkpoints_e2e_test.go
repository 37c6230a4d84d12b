package main

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/ctxhost/ctxhost/client"
	"github.com/ctxhost/ctxhost/sdk"
)

// TestServeCheckpoints drives checkpoints through a real `ctxhost serve`
// on its SQLite store: the Go client makes three turns, JSON over HTTP
// lists them, the CLI reads one, forks it and rewinds the session to it.
func TestServeCheckpoints(t *testing.T) {
	s, _ := newServe(t, "")
	ctx := context.Background()
	c := client.New("http://"+s.addr, client.Options{})
	if _, err := c.CreateSession(ctx, "cp", ""); err != nil {
		t.Fatal(err)
	}
	var tags []string
	for n := 1; n <= 3; n++ {
		p, err := c.Turn(ctx, "cp", "", client.WriteOptions{}, sdk.Message{Role: sdk.RoleUser, Content: fmt.Sprint("question ", n)},
			sdk.Message{Role: sdk.RoleAssistant, Content: fmt.Sprint("answer ", n)})
		if err != nil {
			t.Fatal(err)
		}
		tags = append(tags, p.PayloadTag)
	}
	list := mustCall(t, s.addr, "ListCheckpoints", `{"sessionId":"cp"}`)
	cps, _ := list["checkpoints"].([]any)
	if len(cps) != 3 {
		t.Fatalf("ListCheckpoints over HTTP: %v", list)
	}
	second := cps[1].(map[string]any)
	if second["payloadTag"] != tags[1] || second["messages"] != float64(4) {
		t.Errorf("second checkpoint %v, Prepare's tag %s", second, tags[1])
	}
	seq := fmt.Sprint(second["sequence"])
	cli := func(args ...string) result {
		t.Helper()
		return ctxhost(t, "", append([]string{"checkpoints", "-server", "http://" + s.addr}, args...)...)
	}
	if r := cli("list", "cp"); r.code != 0 || strings.Count(r.stdout, "\n") != 3 || !strings.Contains(r.stdout, tags[2]) {
		t.Errorf("checkpoints list: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	if r := cli("show", "cp", seq); r.code != 0 || !strings.Contains(r.stdout, "answer 2") || strings.Contains(r.stdout, "question 3") {
		t.Errorf("checkpoints show: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	if r := cli("fork", "cp", seq, "cp-b"); r.code != 0 || !strings.Contains(r.stdout, "as cp-b (4 messages)") {
		t.Errorf("checkpoints fork: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	if r := cli("fork", "cp", seq, "cp-b"); r.code == 0 || !strings.Contains(r.stderr, "already") {
		t.Errorf("fork onto a session: exit %d\n%s", r.code, r.stderr)
	}
	r := cli("-json", "rewind", "cp", seq)
	if r.code != 0 || !strings.Contains(r.stdout, `"branchSessionId":"cp:branch-`) {
		t.Fatalf("checkpoints rewind: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	for id, want := range map[string]int{"cp": 4, "cp-b": 4} {
		h, err := c.History(ctx, id, nil, "")
		if err != nil || len(h) != want {
			t.Errorf("%s holds %d messages (%v), want %d", id, len(h), err, want)
		}
	}
	if r := cli("show", "cp", "999"); r.code == 0 || !strings.Contains(r.stderr, "not kept") {
		t.Errorf("show a sequence never stored: exit %d\n%s", r.code, r.stderr)
	}
}
