package main

import (
	"bytes"
	"compress/gzip"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ctxhost/ctxhost/internal/replay"
)

// texts are the role and text of each message, "role: text".
func texts(t *testing.T, msgs []replay.Message) []string {
	t.Helper()
	var out []string
	for _, m := range msgs {
		s, err := replay.ContentText(m.Content)
		if err != nil {
			t.Fatal(err)
		}
		for _, c := range m.ToolCalls {
			s += fmt.Sprintf(" [call %s %s]", c.ID, c.Function.Name)
		}
		if m.ToolCallID != "" {
			s = "(" + m.ToolCallID + ") " + s
		}
		out = append(out, m.Role+": "+s)
	}
	return out
}

func wantTexts(t *testing.T, what string, got []replay.Message, want ...string) {
	t.Helper()
	g := texts(t, got)
	if strings.Join(g, "\n") != strings.Join(want, "\n") {
		t.Errorf("%s:\ngot  %q\nwant %q", what, g, want)
	}
}

func TestConvertTauBench(t *testing.T) {
	traj := `[{"task_id": 0, "traj": [
		{"role": "system", "content": "# Airline Agent Policy"},
		{"role": "user", "content": "I am mia_li_3668."},
		{"content": null, "role": "assistant", "tool_calls": [{"function": {"arguments": "{\"user_id\":\"mia_li_3668\"}", "name": "get_user_details"}, "id": "call_1", "type": "function"}]},
		{"role": "tool", "tool_call_id": "call_1", "name": "get_user_details", "content": "{\"email\": \"mia@example.com\"}"},
		{"content": "Found you.", "role": "assistant"}]}, {"task_id": 1, "traj": []}]`
	ls, err := tauTrajectories("o/r:h.json", []byte(traj))
	if err != nil || len(ls) != 1 || ls[0].ID != "o/r:h.json#0" {
		t.Fatalf("%v, %+v: want one run, o/r:h.json#0", err, ls)
	}
	wantTexts(t, "trajectory", ls[0].Messages, "system: # Airline Agent Policy", "user: I am mia_li_3668.",
		"assistant:  [call call_1 get_user_details]", `tool: (call_1) {"email": "mia@example.com"}`, "assistant: Found you.")

	display := "user: Hi, cancel my flight.\nassistant: None\ntool: Error: user not found\nassistant: Your user id?\n" +
		"user: sara_1\nassistant: Looking it up.\ntool: {\"orders\": [\"#W1\"]}\ntool: second output\nline two\nassistant: Done."
	line, _ := json.Marshal(map[string]string{"messages_display": display})
	ls, err = tauFewShot("o/r:f.jsonl", append(append(line, '\n'), line...))
	if err != nil || len(ls) != 2 || ls[1].ID != "o/r:f.jsonl#2" {
		t.Fatalf("%v, %+v: want two, the second o/r:f.jsonl#2", err, ls)
	}
	wantTexts(t, "few-shot", ls[0].Messages, "user: Hi, cancel my flight.", "assistant:  [call call_1 lookup]",
		"tool: (call_1) Error: user not found", "assistant: Your user id?", "user: sara_1",
		"assistant: Looking it up. [call call_2 lookup] [call call_3 lookup]", `tool: (call_2) {"orders": ["#W1"]}`,
		"tool: (call_3) second output\nline two", "assistant: Done.")
	if c, err := convOf("tools", ls[0].ID, ls[0].Messages, false); err != nil || c == nil {
		t.Errorf("the few-shot conversation does not replay: %v", err)
	}
}

func TestConvertHHRLHF(t *testing.T) {
	var raw bytes.Buffer
	zw := gzip.NewWriter(&raw)
	for i, c := range []string{
		"\n\nHuman: one\n\nAssistant: a\n\nHuman: two\n\nAssistant: b", // two human turns: left out
		"\n\nHuman: q1 INV1234\n\nAssistant: a1\n\nHuman: q2\n\nAssistant: a2\n\nHuman: q3\n\nAssistant: a3\n\nmore",
		"\n\nHuman: x\n\nAssistant: y\n\nHuman: z\n\nAssistant: w\n\nHuman: v\n\nAssistant:",
		"\n\nHuman: 1\n\nAssistant: 2\n\nHuman: 3\n\nAssistant: 4\n\nHuman: 5\n\nAssistant: 6", // past the limit
	} {
		b, _ := json.Marshal(map[string]string{"chosen": c, "rejected": fmt.Sprint(i)})
		zw.Write(append(b, '\n'))
	}
	zw.Close()
	ls, err := hhRLHF("o/r:t.jsonl.gz", raw.Bytes(), 3, 2)
	if err != nil || len(ls) != 2 || ls[0].ID != "o/r:t.jsonl.gz#2" || ls[1].ID != "o/r:t.jsonl.gz#3" {
		t.Fatalf("%v, %+v: want lines 2 and 3", err, ls)
	}
	wantTexts(t, "line 2", ls[0].Messages, "user: q1 INV1234", "assistant: a1", "user: q2", "assistant: a2", "user: q3", "assistant: a3\n\nmore")
	wantTexts(t, "line 3 (its empty last turn left out)", ls[1].Messages, "user: x", "assistant: y", "user: z", "assistant: w", "user: v")
}

// chatdevSample is a ChatDev log: a phase opened by the CEO (its role
// prompt first), answered by the CPO; a phase opened by the Programmer
// answered by the Code Reviewer (its role prompt first, in brackets), the
// Programmer replying, and the closing reply logged under both roles.
const chatdevSample = `[2023-17-08 19:39:56 INFO] **[Preprocessing]**

**task_prompt**: design a game

[2023-17-08 19:40:01 INFO] System: **[chatting]**

| **phase_name** | DemandAnalysis |

[2023-17-08 19:40:01 INFO] Chief Executive Officer: **[Start Chat]**

ChatDev is a software company.
Never forget I am a Chief Executive Officer and you are a Chief Product Officer.
Here is a new customer's task: design a game.
To complete the task, I will give you one or more instructions.
Decide the product modality.

[2023-17-08 19:40:01 INFO] **[OpenAI_Usage_Info Send]**
num_tokens: 838

[2023-17-08 19:40:02 INFO] Chief Product Officer: **Chief Product Officer<->Chief Executive Officer on : DemandAnalysis, turn 0**

<INFO> Application

[2023-17-08 19:40:02 INFO] **[Seminar Conclusion]**:

 <INFO> Application

[2023-17-08 19:41:00 INFO] Programmer: **[Start Chat]**

[ChatDev is a software company.
You are Code Reviewer.
To complete the task, you must write a response.]

Review game.py (v1.2.3).

[2023-17-08 19:41:39 INFO] Code Reviewer: **Code Reviewer<->Programmer on : CodeReviewComment, turn 0**

[ChatDev is a software company.
You are Programmer.
To complete the task, I will give you one or more instructions.]

Add a score.

[2023-17-08 19:41:39 INFO] Programmer: **Code Reviewer<->Programmer on : CodeReviewComment, turn 0**

Done: score added.

[2023-17-08 19:41:40 INFO] Code Reviewer: **Code Reviewer<->Programmer on : CodeReviewComment, turn 1**

<INFO> Finished

[2023-17-08 19:41:40 INFO] Programmer: **Code Reviewer<->Programmer on : CodeReviewComment, turn 1**

<INFO> Finished
`

func TestConvertChatDev(t *testing.T) {
	msgs, replies := chatdevLog([]byte(chatdevSample))
	if replies != 3 {
		t.Errorf("%d replies, want 3", replies)
	}
	wantTexts(t, "log", msgs, "user: Chief Executive Officer: Decide the product modality.", "assistant: Chief Product Officer: <INFO> Application",
		"user: Programmer: Review game.py (v1.2.3).", "assistant: Code Reviewer: Add a score.", "user: Programmer: Done: score added.",
		"assistant: Code Reviewer: <INFO> Finished")
}

func TestConvertAider(t *testing.T) {
	md := "-*- mode: fundamental -*-\n> stray output\n\n" +
		"# aider chat started at 2024-05-01 10:00:00\n\n> Aider v0.30\n> Added x.py\n\n" +
		"#### /add x.py  \n\n> Added x.py to the chat\n\n" +
		"#### fix the bug in x.py  \n#### it crashes on line 1234  \n\n" +
		"The bug is on line 1234.  \n\nx.py\n```\n<<<<<<< SEARCH\n=======\n>>>>>>> REPLACE\n```\n\n> Applied edit to x.py\n\nDone.\n\n" +
		"#### thanks  \n\n" +
		"# aider chat started at 2024-05-01 11:00:00\n\nAn answer to a request made earlier.\n\n#### next  \n\nok\n\n" +
		"# aider chat started at 2024-05-01 12:00:00\n\n#### no answer  \n"
	ls := aiderHistory("o/r:h.md", []byte(md))
	if len(ls) != 1 || ls[0].ID != "o/r:h.md#1" {
		t.Fatalf("%+v: want session 1 alone", ls)
	}
	wantTexts(t, "session 1", ls[0].Messages, "system: "+aiderSystem, "user: fix the bug in x.py\nit crashes on line 1234",
		"assistant: The bug is on line 1234.\n\nx.py\n```\n<<<<<<< SEARCH\n=======\n>>>>>>> REPLACE\n```\n\nDone.", "user: thanks")
}

// TestConvertFromGit runs convert on git repositories made here, one for
// each source (ChatDev's with a log changed and then deleted, another
// only on a branch with a copy of it at another path): every
// corpus is written, its conversations read back by the evaluation with
// the ids of their material, and the sources listed with their commits.
func TestConvertFromGit(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Fatal("git is needed to read the material: ", err)
	}
	root := t.TempDir()
	// repo makes a repository of commits, each a list of path and text
	// (no text: the path removed; path "branch": a branch made first).
	repo := func(name string, commits ...[][2]string) string {
		dir := filepath.Join(root, name)
		run := func(args ...string) {
			cmd := exec.Command("git", append([]string{"-C", dir, "-c", "user.name=t", "-c", "user.email=t@example.com"}, args...)...)
			if out, err := cmd.CombinedOutput(); err != nil {
				t.Fatalf("git %v: %v: %s", args, err, out)
			}
		}
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		run("init", "-q", "-b", "main")
		for i, files := range commits {
			for _, pt := range files {
				p, text := pt[0], pt[1]
				if p == "branch" {
					run("checkout", "-q", "-b", text)
					continue
				}
				f := filepath.Join(dir, p)
				if text == "" {
					run("rm", "-q", p)
					continue
				}
				if err := os.MkdirAll(filepath.Dir(f), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(f, []byte(text), 0o644); err != nil {
					t.Fatal(err)
				}
				run("add", p)
			}
			run("commit", "-q", "-m", fmt.Sprint("commit ", i))
		}
		return dir
	}
	display, _ := json.Marshal(map[string]string{"messages_display": "user: hi, I am sara_1\nassistant: None\ntool: {\"id\": \"sara_1\"}\nassistant: Hello Sara."})
	tau := repo("tau-bench", [][2]string{
		{"historical_trajectories/gpt-4o-airline.json", `[{"traj": [{"role": "user", "content": "book HAT001"}, {"role": "assistant", "content": "Booked."}]}]`},
		{"few_shot_data/MockRetailDomainEnv-few_shot.jsonl", string(display) + "\n"},
		{"few_shot_data/MockAirlineDomainEnv-few_shot.jsonl", string(display) + "\n"},
	})
	var gz bytes.Buffer
	zw := gzip.NewWriter(&gz)
	zw.Write([]byte(`{"chosen": "\n\nHuman: a\n\nAssistant: b\n\nHuman: c\n\nAssistant: d\n\nHuman: e\n\nAssistant: f"}` + "\n"))
	zw.Close()
	hh := repo("hh-rlhf", [][2]string{{"harmless-base/test.jsonl.gz", gz.String()}})
	short := strings.Split(chatdevSample, "[2023-17-08 19:41:00 INFO]")[0] // one reply: left out
	site := strings.ReplaceAll(chatdevSample, "design a game", "design a site")
	chatdev := repo("ChatDev",
		[][2]string{{"WareHouse/game_1/game_1.log", short}},
		[][2]string{{"WareHouse/game_1/game_1.log", chatdevSample}},
		[][2]string{{"WareHouse/game_1/game_1.log", ""}},
		[][2]string{{"branch", "other"}, {"WareHouse/other.log", site}, {"WareHouse/copy.log", site}})
	aider := repo("aider", [][2]string{{"tests/fixtures/chat-history.md", "# aider chat started at x\n\n#### hello  \n\nHi.\n"}})

	out := filepath.Join(root, "corpora")
	if err := cmdConvert([]string{"-out", out, "-tau-bench", tau, "-hh-rlhf", hh, "-chatdev", chatdev, "-aider", aider}); err != nil {
		t.Fatal(err)
	}
	want := map[string][]string{
		"tools": {"sierra-research/tau-bench:historical_trajectories/gpt-4o-airline.json#0",
			"sierra-research/tau-bench:few_shot_data/MockRetailDomainEnv-few_shot.jsonl#1",
			"sierra-research/tau-bench:few_shot_data/MockAirlineDomainEnv-few_shot.jsonl#1"},
		"assistant":   {"anthropics/hh-rlhf:harmless-base/test.jsonl.gz#1"},
		"multi-agent": {"OpenBMB/ChatDev:WareHouse/copy.log", "OpenBMB/ChatDev:WareHouse/game_1/game_1.log"},
		"aider":       {"Aider-AI/aider:tests/fixtures/chat-history.md#1"},
	}
	for shape, ids := range want {
		convs, err := loadCorpus(filepath.Join(out, shape))
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, c := range convs {
			got = append(got, c.id)
		}
		if strings.Join(got, " ") != strings.Join(ids, " ") {
			t.Errorf("%s: %q, want %q", shape, got, ids)
		}
	}
	sources, err := os.ReadFile(filepath.Join(out, "SOURCES"))
	if err != nil {
		t.Fatal(err)
	}
	head, _ := exec.Command("git", "-C", tau, "rev-parse", "HEAD").Output()
	if !strings.Contains(string(sources), "sierra-research/tau-bench@"+strings.TrimSpace(string(head))) ||
		!strings.Contains(string(sources), "(2 logs, 2 of >= 2 replies)") {
		t.Errorf("SOURCES:\n%s\nwant tau-bench at %s and ChatDev's 2 logs (game_1 at its last version, the copy once)", sources, head)
	}
}
