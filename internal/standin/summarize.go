package main

import (
	"encoding/json"
	"fmt"
	"net/http"
	"regexp"
	"strings"
	"time"
)

// SummarizerModel is the model name the stand-in answers as a summarizer
// on all three APIs, with a deterministic digest of its input: the
// previous summary's lines, then one line per message ("- m12: " and the
// facts the line states: ids, numbers, paths; its first words when it
// states none), the oldest lines dropped to fit the call's token limit.
// A suffix makes it fail: -down (503), -slow (answers after 30 s), -refuse
// (a refusal), -empty, -long (an answer over any limit), -garbage (bytes
// that are not text).
const SummarizerModel = "standin-summarizer"

// summaries counts the summarizer calls (GET /standin/summaries).
type summaryCounts struct {
	Calls     int64 `json:"calls"`
	CallerKey int64 `json:"caller_key"` // calls that carried APIKey
}

var headerRe = regexp.MustCompile(`^\[(\S+) [^\]]*\] ?(.*)$`)

// factsOf is the words of text that look like facts, in order, each once:
// letters mixed with digits (ids, codes), numbers of three digits or
// more, dates, paths and e-mail addresses.
func factsOf(text string, limit int) []string {
	var out []string
	seen := map[string]bool{}
	for _, w := range strings.FieldsFunc(text, func(r rune) bool {
		return r == ' ' || r == '\n' || r == '\t' || strings.ContainsRune(",;()[]{}\"'`<>=!?", r)
	}) {
		w = strings.Trim(w, ".:")
		letters, digits := 0, 0
		for _, r := range w {
			switch {
			case r >= '0' && r <= '9':
				digits++
			case r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z':
				letters++
			}
		}
		fact := (letters > 0 && digits > 0 && len(w) >= 3) || (letters == 0 && digits >= 3) ||
			strings.Contains(w, "@") || (strings.Contains(w, "/") && len(w) > 2)
		if fact && !seen[w] {
			seen[w] = true
			out = append(out, w)
			if len(out) == limit {
				break
			}
		}
	}
	return out
}

// summarizerCall reports whether the request names the summarizer model,
// and its mode (the suffix, "" for a digest).
func summarizerCall(r *http.Request, body []byte) (mode string, ok bool) {
	model := ""
	if call := r.PathValue("call"); call != "" {
		model, _, _ = strings.Cut(call, ":")
	} else {
		var b struct {
			Model string `json:"model"`
		}
		_ = json.Unmarshal(body, &b)
		model = b.Model
	}
	if !strings.HasPrefix(model, SummarizerModel) {
		return "", false
	}
	return strings.TrimPrefix(strings.TrimPrefix(model, SummarizerModel), "-"), true
}

// summarize answers a summarizer call in the provider's shape.
func (s *standin) summarize(w http.ResponseWriter, r *http.Request, p provider, body []byte, mode string) {
	key := bearer(r)
	if key == "" {
		key = r.Header.Get("x-api-key")
	}
	if key == "" {
		key = r.Header.Get("x-goog-api-key")
	}
	s.mu.Lock()
	s.summaries.Calls++
	if key == APIKey {
		s.summaries.CallerKey++
	}
	s.mu.Unlock()
	if key != APIKey {
		p.fail(w, http.StatusUnauthorized, "wrong key")
		return
	}
	input, limit := summarizerInput(body)
	text, finish := digestOf(input, limit), ""
	switch mode {
	case "down":
		p.fail(w, http.StatusServiceUnavailable, "the summarizer is down")
		return
	case "slow":
		select {
		case <-r.Context().Done():
			return
		case <-time.After(30 * time.Second):
		}
	case "refuse":
		text, finish = "", "refusal"
	case "empty":
		text = ""
	case "long":
		text = strings.Repeat("a summary far longer than asked ", 4000)
	case "garbage":
		text = "\x00\x01\x02PK\x03\x04 binary"
	}
	answerSummary(w, p.endpoint(), text, finish, len(input)/4, len(text)/4)
}

// summarizerInput is the texts of the request's messages (or contents)
// and its output limit.
func summarizerInput(body []byte) (string, int) {
	var b struct {
		Messages []struct {
			Role    string `json:"role"`
			Content any    `json:"content"`
		} `json:"messages"`
		Contents []struct {
			Parts []struct {
				Text string `json:"text"`
			} `json:"parts"`
		} `json:"contents"`
		MaxTokens  int `json:"max_tokens"`
		Generation struct {
			Max int `json:"maxOutputTokens"`
		} `json:"generationConfig"`
	}
	_ = json.Unmarshal(body, &b)
	var parts []string
	for _, m := range b.Messages {
		if m.Role == "system" {
			continue
		}
		if s, ok := m.Content.(string); ok {
			parts = append(parts, s)
		}
	}
	for _, c := range b.Contents {
		for _, p := range c.Parts {
			parts = append(parts, p.Text)
		}
	}
	return strings.Join(parts, "\n"), max(b.MaxTokens, b.Generation.Max)
}

// digestOf is the deterministic summary of input within limit tokens
// (at most 3 bytes a token, so any tokenizer counts it within).
func digestOf(input string, limit int) string {
	var lines []string
	inPrevious := false
	for _, line := range strings.Split(input, "\n") {
		switch {
		case line == "<previous_summary>":
			inPrevious = true
		case line == "</previous_summary>":
			inPrevious = false
		case inPrevious:
			if strings.TrimSpace(line) != "" {
				lines = append(lines, line)
			}
		default:
			if m := headerRe.FindStringSubmatch(line); m != nil {
				facts := factsOf(m[2], 12)
				if len(facts) == 0 {
					f := strings.Fields(m[2])
					facts = f[:min(5, len(f))]
				}
				lines = append(lines, fmt.Sprintf("- %s: %s", m[1], strings.Join(facts, " ")))
			}
		}
	}
	for len(lines) > 1 && len(strings.Join(lines, "\n")) > 3*max(limit, 16) {
		lines = lines[1:]
	}
	return strings.Join(lines, "\n")
}

// answerSummary writes a summary answer in the shape of endpoint's API.
func answerSummary(w http.ResponseWriter, endpoint, text, finish string, in, out int) {
	var body any
	switch endpoint {
	case "messages":
		if finish == "" {
			finish = "end_turn"
		}
		body = map[string]any{"id": "msg_summary", "type": "message", "role": "assistant", "model": SummarizerModel,
			"content": []map[string]string{{"type": "text", "text": text}}, "stop_reason": finish,
			"usage": map[string]int{"input_tokens": in, "output_tokens": out}}
	case "generateContent":
		reason := "STOP"
		if finish == "refusal" {
			reason = "SAFETY"
		}
		body = map[string]any{"candidates": []map[string]any{{"content": map[string]any{"role": "model",
			"parts": []map[string]string{{"text": text}}}, "finishReason": reason}},
			"usageMetadata": map[string]int{"promptTokenCount": in, "candidatesTokenCount": out}}
	default:
		msg := map[string]any{"role": "assistant", "content": text}
		reason := "stop"
		if finish == "refusal" {
			msg["content"], msg["refusal"] = nil, "I can't help with that."
		}
		body = map[string]any{"id": "chatcmpl-summary", "object": "chat.completion", "model": SummarizerModel,
			"choices": []map[string]any{{"index": 0, "message": msg, "finish_reason": reason}},
			"usage":   map[string]int{"prompt_tokens": in, "completion_tokens": out, "total_tokens": in + out}}
	}
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(body)
}
