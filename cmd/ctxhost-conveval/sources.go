package main

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"encoding/json"
	"fmt"
	"io"
	"regexp"
	"strings"

	"github.com/ctxhost/ctxhost/internal/replay"
)

// The converters below turn public material into corpus lines: each a
// pure function of the bytes of one file (read by convert from a git
// repository), the conversation's source id made of the repository, the
// file's path and where in the file the conversation is.

// textMessage is a message of role with text as its content.
func textMessage(role, text string) replay.Message {
	b, _ := json.Marshal(text)
	return replay.Message{Role: role, Content: b}
}

// tauTrajectories are the conversations of a tau-bench
// historical_trajectories file (a JSON array of runs, each with its traj,
// OpenAI-style messages with tool calls), as recorded. src names the file
// in the ids: src#N is the Nth run (from 0).
func tauTrajectories(src string, data []byte) ([]corpusLine, error) {
	var runs []struct {
		Traj []replay.Message `json:"traj"`
	}
	if err := json.Unmarshal(data, &runs); err != nil {
		return nil, fmt.Errorf("%s: %w", src, err)
	}
	out := make([]corpusLine, 0, len(runs))
	for i, r := range runs {
		if len(r.Traj) == 0 {
			continue
		}
		msgs := make([]replay.Message, len(r.Traj))
		for j, m := range r.Traj {
			if len(m.Content) == 0 || string(m.Content) == "null" {
				m.Content = json.RawMessage(`""`)
			}
			msgs[j] = m
		}
		out = append(out, corpusLine{ID: fmt.Sprintf("%s#%d", src, i), Messages: msgs})
	}
	return out, nil
}

// fewShotRole is the role prefix of a line of tau-bench's
// messages_display.
var fewShotRole = regexp.MustCompile(`^(user|assistant|tool): `)

// tauFewShot are the conversations of a tau-bench few_shot_data file (a
// JSON object a line, its messages_display the conversation as
// "role: text" lines, a text running on over the lines that name no
// role). The calls are shown without name or arguments ("assistant:
// None", or an assistant's text directly followed by a tool's output):
// each becomes a call of a tool named lookup with no arguments, answered
// by the tool outputs that follow it. src#N is the file's Nth line (from
// 1).
func tauFewShot(src string, data []byte) ([]corpusLine, error) {
	var out []corpusLine
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 1<<20), 64<<20)
	for n := 1; sc.Scan(); n++ {
		if strings.TrimSpace(sc.Text()) == "" {
			continue
		}
		var l struct {
			Display string `json:"messages_display"`
		}
		if err := json.Unmarshal(sc.Bytes(), &l); err != nil {
			return nil, fmt.Errorf("%s:%d: %w", src, n, err)
		}
		type shown struct{ role, text string }
		var lines []shown
		for _, s := range strings.Split(l.Display, "\n") {
			if m := fewShotRole.FindStringSubmatch(s); m != nil {
				lines = append(lines, shown{m[1], s[len(m[0]):]})
			} else if len(lines) > 0 {
				lines[len(lines)-1].text += "\n" + s
			}
		}
		var msgs []replay.Message
		calls := 0
		for i, s := range lines {
			switch s.role {
			case "user":
				msgs = append(msgs, textMessage("user", s.text))
			case "assistant":
				called := i+1 < len(lines) && lines[i+1].role == "tool"
				if s.text == "None" {
					s.text = ""
					if !called {
						continue // a call with no output shown: nothing to replay
					}
				}
				msgs = append(msgs, textMessage("assistant", s.text))
			case "tool":
				last := &msgs[len(msgs)-1] // a tool line always follows an assistant's or a tool's
				if last.Role == "tool" {
					last = &msgs[len(msgs)-2]
				}
				calls++
				id := fmt.Sprintf("call_%d", calls)
				tc := replay.ToolCall{ID: id}
				tc.Function.Name = "lookup"
				tc.Function.Arguments = json.RawMessage(`"{}"`)
				last.ToolCalls = append(last.ToolCalls, tc)
				m := textMessage("tool", s.text)
				m.ToolCallID = id
				msgs = append(msgs, m)
			}
		}
		if len(lines) > 0 && lines[0].role == "tool" {
			return nil, fmt.Errorf("%s:%d: a tool's output before any message", src, n)
		}
		out = append(out, corpusLine{ID: fmt.Sprintf("%s#%d", src, n), Messages: msgs})
	}
	return out, sc.Err()
}

// hhTurn splits an hh-rlhf transcript into its turns.
var hhTurn = regexp.MustCompile(`(?:^|\n\n)(Human|Assistant):(?: |$)`)

// hhRLHF are the conversations of an hh-rlhf file (gzipped JSON lines),
// the chosen transcript of each line ("Human:" and "Assistant:" turns as
// user and assistant messages, an empty turn left out), those of at least
// minHuman human turns, in file order, at most limit of them (0: all).
// src#N is the file's Nth line (from 1).
func hhRLHF(src string, gz []byte, minHuman, limit int) ([]corpusLine, error) {
	zr, err := gzip.NewReader(bytes.NewReader(gz))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", src, err)
	}
	data, err := io.ReadAll(zr)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", src, err)
	}
	var out []corpusLine
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 1<<20), 64<<20)
	for n := 1; sc.Scan() && (limit == 0 || len(out) < limit); n++ {
		if strings.TrimSpace(sc.Text()) == "" {
			continue
		}
		var l struct {
			Chosen string `json:"chosen"`
		}
		if err := json.Unmarshal(sc.Bytes(), &l); err != nil {
			return nil, fmt.Errorf("%s:%d: %w", src, n, err)
		}
		marks := hhTurn.FindAllStringSubmatchIndex(l.Chosen, -1)
		var msgs []replay.Message
		human := 0
		for i, m := range marks {
			end := len(l.Chosen)
			if i+1 < len(marks) {
				end = marks[i+1][0]
			}
			role := "assistant"
			if l.Chosen[m[2]:m[3]] == "Human" {
				role = "user"
				human++
			}
			if text := strings.TrimSpace(l.Chosen[m[1]:end]); text != "" {
				msgs = append(msgs, textMessage(role, text))
			}
		}
		if human >= minHuman {
			out = append(out, corpusLine{ID: fmt.Sprintf("%s#%d", src, n), Messages: msgs})
		}
	}
	return out, sc.Err()
}

// chatdevEntry is the head of a ChatDev log entry: its time, level and
// what follows.
var chatdevEntry = regexp.MustCompile(`^\[\d{4}-\d\d-\d\d \d\d:\d\d:\d\d [A-Z]+\] (.*)$`)

var (
	chatdevStart = regexp.MustCompile(`^([A-Za-z][A-Za-z ]*?): \*\*\[Start Chat\]\*\*$`)
	chatdevReply = regexp.MustCompile(`^([A-Za-z][A-Za-z ]*?): \*\*(.+?)<->(.+?) on : \w+, turn \d+\*\*$`)
)

// chatdevLog is the conversation of a ChatDev WareHouse log: each phase's
// opening ("[Start Chat]") and the messages of the role that opened it are
// user messages, the replies of the role that answers are assistant
// messages, each prefixed with its sender's role. The role prompt ChatDev
// writes before a message (withoutRolePrompt) is left out, and so is a
// message that repeats the reply before it word for word (ChatDev logs a
// closing reply under both roles). It returns the messages and the number
// of replies.
func chatdevLog(data []byte) ([]replay.Message, int) {
	type entry struct {
		head string
		body []string
	}
	var entries []entry
	for _, l := range strings.Split(strings.ReplaceAll(string(data), "\r\n", "\n"), "\n") {
		if m := chatdevEntry.FindStringSubmatch(l); m != nil {
			entries = append(entries, entry{head: m[1]})
		} else if len(entries) > 0 {
			e := &entries[len(entries)-1]
			e.body = append(e.body, l)
		}
	}
	var msgs []replay.Message
	replies, last := 0, ""
	for _, e := range entries {
		text := strings.TrimSpace(strings.Join(e.body, "\n"))
		role, sender := "", ""
		if m := chatdevStart.FindStringSubmatch(e.head); m != nil {
			role, sender, text = "user", m[1], withoutRolePrompt(text, true)
		} else if m := chatdevReply.FindStringSubmatch(e.head); m != nil {
			role, sender, text = "user", m[1], withoutRolePrompt(text, false)
			if m[1] == m[2] { // the first named is the role that answers
				role = "assistant"
			}
		}
		if role == "" || text == "" || (role == "user" && text == last) {
			continue
		}
		if role == "assistant" {
			replies++
			last = text
		}
		msgs = append(msgs, textMessage(role, sender+": "+text))
	}
	return msgs, replies
}

// withoutRolePrompt is a message without the role prompt ChatDev writes
// before it: in later logs before every message, in brackets (up to the
// line that closes them: its "To complete the task" line, or within the
// first lines one that ends with "]"), in earlier ones before a phase's
// opening alone (up to its first line that starts "To complete the
// task"). A message without one is kept whole.
func withoutRolePrompt(text string, opening bool) string {
	lines := strings.Split(text, "\n")
	bracket := strings.HasPrefix(text, "[")
	for i, l := range lines[:min(len(lines), 60)] {
		closing := strings.HasPrefix(l, "To complete the task") && (!bracket || strings.HasSuffix(l, "]"))
		if (bracket && i < 12 && strings.HasSuffix(l, "]")) || ((bracket || opening) && closing) {
			return strings.TrimSpace(strings.Join(lines[i+1:], "\n"))
		}
	}
	return text
}

// aiderSystem is the system message of every aider conversation.
const aiderSystem = "Act as an expert software developer. Always use best practices when coding. " +
	"Respect and use existing conventions, libraries, etc that are already present in the code base. " +
	"Take requests for changes to the supplied code. If the request is ambiguous, ask questions. " +
	"To suggest changes to a file, describe each change with a SEARCH/REPLACE block."

// aiderHistory are the conversations of an aider chat history
// (.aider.chat.history.md): a session each ("# aider chat started at"
// lines), its "####" lines the user's messages, plain text the model's
// answers, "> " lines (aider's terminal output) and aider commands (a
// user message starting with "/") left out, after a short aider-style
// system message. A session that opens with an answer (its request made
// in an earlier session) is left out, and so is one without an answer.
// src#N is the file's Nth session (from 1).
func aiderHistory(src string, data []byte) []corpusLine {
	var out []corpusLine
	session := 0
	var msgs []replay.Message
	role := ""
	var buf []string
	flush := func() {
		if text := strings.TrimSpace(strings.Join(buf, "\n")); role != "" && text != "" && !(role == "user" && strings.HasPrefix(text, "/")) {
			if n := len(msgs); n > 0 && msgs[n-1].Role == role {
				prev, _ := replay.ContentText(msgs[n-1].Content)
				msgs[n-1] = textMessage(role, prev+"\n\n"+text)
			} else {
				msgs = append(msgs, textMessage(role, text))
			}
		}
		role, buf = "", nil
	}
	end := func() {
		flush()
		answered := false
		for _, m := range msgs {
			answered = answered || m.Role == "assistant"
		}
		if session > 0 && len(msgs) > 0 && msgs[0].Role == "user" && answered {
			out = append(out, corpusLine{ID: fmt.Sprintf("%s#%d", src, session),
				Messages: append([]replay.Message{textMessage("system", aiderSystem)}, msgs...)})
		}
		msgs = nil
	}
	for _, l := range strings.Split(strings.ReplaceAll(string(data), "\r\n", "\n"), "\n") {
		l = strings.TrimRight(l, " \t")
		switch {
		case strings.HasPrefix(l, "# aider chat started at"):
			end()
			session++
		case strings.HasPrefix(l, "####"):
			if role != "user" {
				flush()
				role = "user"
			}
			buf = append(buf, strings.TrimPrefix(strings.TrimPrefix(l, "####"), " "))
		case l == ">" || strings.HasPrefix(l, "> "): // not a SEARCH/REPLACE block's ">>>>>>> REPLACE"
			if role == "user" {
				flush()
			}
			for len(buf) > 0 && buf[len(buf)-1] == "" {
				buf = buf[:len(buf)-1] // the blank line before the output goes with it
			}
		default:
			if role == "user" {
				flush()
			}
			if role == "" {
				if l == "" {
					continue
				}
				role = "assistant"
			}
			buf = append(buf, l)
		}
	}
	end()
	return out
}
