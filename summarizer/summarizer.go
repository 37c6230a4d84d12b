// Package summarizer is ctxhost's first-party summarizer: it condenses a
// span of a conversation's history by calling a model through one of three
// provider APIs (OpenAI Chat Completions, Anthropic Messages, Gemini
// generateContent), as an HCL summarizer block configures it. It checks
// what the model answers (a refusal, a cut-off or empty answer is an
// error) and never lets the API key reach an error, a log or a store: the
// key is read from the environment variable the block names, or taken from
// the request (the call path's caller's key, held in memory for the call).
package summarizer

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/ctxhost/ctxhost/sdk"
)

// The provider APIs a Model speaks.
const (
	KindOpenAI    = "openai"
	KindAnthropic = "anthropic"
	KindGemini    = "gemini"
)

// Kinds lists the values of Config.Kind.
var Kinds = []string{KindOpenAI, KindAnthropic, KindGemini}

// DefaultPrompt is the instruction the model gets when the block sets none.
const DefaultPrompt = `You condense the earlier part of a conversation between a user and an AI agent, so that the agent can go on without it. Keep every fact the agent may still need: the task and its constraints, decisions made and why, every identifier (ids, ticket and order numbers, file paths, URLs, names, amounts, dates, error codes), what failed and how it was resolved, and what is still open. Fold the previous summary in, keeping what still matters. Write terse plain text, no preamble.`

// Defaults of Config.
const (
	DefaultTimeout = 60 * time.Second
	// MessageChars bounds one message's text in the request: a longer one
	// is sent as its head and tail around a marker.
	MessageChars = 6000
	// maxAnswerBytes bounds the model's answer body.
	maxAnswerBytes = 4 << 20
)

// Config is one summarizer block.
type Config struct {
	// Name is the block's label (in errors).
	Name string
	// Kind is the provider API: openai, anthropic or gemini.
	Kind string
	// BaseURL is where the API paths are appended (https://api.openai.com).
	BaseURL string
	// Model is the model the calls name.
	Model string
	// Prompt is the instruction (empty: DefaultPrompt).
	Prompt string
	// Timeout bounds one call (default 60 s; the host's deadline applies
	// too).
	Timeout time.Duration
	// KeyEnv names the environment variable holding the API key (read at
	// each call; empty: no key but the caller's).
	KeyEnv string
	// CallerKey makes a call take the request's key (the call path's
	// caller's) when it has one, before KeyEnv's.
	CallerKey bool
	// Client makes the calls (nil: a client of its own).
	Client *http.Client
}

// Model is a summarizer calling a model. It is safe for concurrent use.
type Model struct {
	cfg    Config
	client *http.Client
}

// New checks cfg and returns its Model.
func New(cfg Config) (*Model, error) {
	if !oneOf(cfg.Kind, Kinds) {
		return nil, fmt.Errorf("summarizer %q: kind %q, want one of %s", cfg.Name, cfg.Kind, strings.Join(Kinds, ", "))
	}
	u, err := url.Parse(cfg.BaseURL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("summarizer %q: base_url %q is not an http(s) URL", cfg.Name, cfg.BaseURL)
	}
	if cfg.Model == "" {
		return nil, fmt.Errorf("summarizer %q: no model", cfg.Name)
	}
	if cfg.Prompt == "" {
		cfg.Prompt = DefaultPrompt
	}
	if cfg.Timeout <= 0 {
		cfg.Timeout = DefaultTimeout
	}
	cfg.BaseURL = strings.TrimRight(cfg.BaseURL, "/")
	client := cfg.Client
	if client == nil {
		client = &http.Client{}
	}
	return &Model{cfg: cfg, client: client}, nil
}

func oneOf(s string, list []string) bool {
	for _, x := range list {
		if s == x {
			return true
		}
	}
	return false
}

// Summarize implements host.Summarizer: one call to the model with the
// span rendered as text. The session id is not sent.
func (m *Model) Summarize(ctx context.Context, _ string, req sdk.SummarizeRequest) (sdk.SummarizeResult, error) {
	key := os.Getenv(m.cfg.KeyEnv)
	if m.cfg.KeyEnv == "" {
		key = ""
	}
	if m.cfg.CallerKey && req.Key != "" {
		key = req.Key
	}
	ctx, cancel := context.WithTimeout(ctx, m.cfg.Timeout)
	defer cancel()
	res, err := m.call(ctx, key, req)
	if err != nil {
		return sdk.SummarizeResult{}, fmt.Errorf("summarizer %q: %s", m.cfg.Name, redact(err.Error(), key))
	}
	res.Model = m.cfg.Model
	return res, nil
}

// redact removes key from s.
func redact(s, key string) string {
	if len(key) < 4 {
		return s
	}
	return strings.ReplaceAll(s, key, "[redacted]")
}

// outputLimit is the answer's limit asked of the model: a tenth under the
// host's (the model's tokenizer may count more than the host's).
func outputLimit(req sdk.SummarizeRequest) int { return max(req.MaxTokens*9/10, 16) }

func (m *Model) call(ctx context.Context, key string, req sdk.SummarizeRequest) (sdk.SummarizeResult, error) {
	input := Render(req)
	var (
		path   string
		body   any
		header = http.Header{"Content-Type": {"application/json"}}
		parse  func([]byte) (sdk.SummarizeResult, error)
	)
	switch m.cfg.Kind {
	case KindOpenAI:
		path = "/v1/chat/completions"
		body = map[string]any{"model": m.cfg.Model, "max_tokens": outputLimit(req), "messages": []map[string]string{
			{"role": "system", "content": m.cfg.Prompt}, {"role": "user", "content": input}}}
		if key != "" {
			header.Set("Authorization", "Bearer "+key)
		}
		parse = parseOpenAI
	case KindAnthropic:
		path = "/v1/messages"
		body = map[string]any{"model": m.cfg.Model, "max_tokens": outputLimit(req), "system": m.cfg.Prompt,
			"messages": []map[string]string{{"role": "user", "content": input}}}
		header.Set("anthropic-version", "2023-06-01")
		if key != "" {
			header.Set("x-api-key", key)
		}
		parse = parseAnthropic
	default:
		path = "/v1beta/models/" + url.PathEscape(m.cfg.Model) + ":generateContent"
		body = map[string]any{
			"systemInstruction": map[string]any{"parts": []map[string]string{{"text": m.cfg.Prompt}}},
			"contents":          []map[string]any{{"role": "user", "parts": []map[string]string{{"text": input}}}},
			"generationConfig":  map[string]any{"maxOutputTokens": outputLimit(req)},
		}
		if key != "" {
			header.Set("x-goog-api-key", key)
		}
		parse = parseGemini
	}
	b, err := json.Marshal(body)
	if err != nil {
		return sdk.SummarizeResult{}, err
	}
	hr, err := http.NewRequestWithContext(ctx, http.MethodPost, m.cfg.BaseURL+path, bytes.NewReader(b))
	if err != nil {
		return sdk.SummarizeResult{}, err
	}
	hr.Header = header
	resp, err := m.client.Do(hr)
	if err != nil {
		var uerr *url.Error
		if errors.As(err, &uerr) {
			err = uerr.Err // the URL is in the block; the error need not repeat it
		}
		return sdk.SummarizeResult{}, fmt.Errorf("call %s: %w", path, err)
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(io.LimitReader(resp.Body, maxAnswerBytes+1))
	if err != nil {
		return sdk.SummarizeResult{}, fmt.Errorf("read the answer: %w", err)
	}
	if len(raw) > maxAnswerBytes {
		return sdk.SummarizeResult{}, fmt.Errorf("answer over %d bytes", maxAnswerBytes)
	}
	if resp.StatusCode/100 != 2 {
		return sdk.SummarizeResult{}, fmt.Errorf("%s answered %d: %s", path, resp.StatusCode, snippet(raw))
	}
	return parse(raw)
}

// snippet is the start of an error body, as valid text.
func snippet(b []byte) string {
	s := strings.ToValidUTF8(string(b), "?")
	if len(s) > 300 {
		s = s[:300]
		for !utf8.ValidString(s) {
			s = s[:len(s)-1]
		}
		s += "..."
	}
	return strings.TrimSpace(s)
}

func parseOpenAI(raw []byte) (sdk.SummarizeResult, error) {
	var r struct {
		Choices []struct {
			Message struct {
				Content *string `json:"content"`
				Refusal *string `json:"refusal"`
			} `json:"message"`
			FinishReason string `json:"finish_reason"`
		} `json:"choices"`
		Usage struct {
			Prompt     int `json:"prompt_tokens"`
			Completion int `json:"completion_tokens"`
		} `json:"usage"`
	}
	if err := json.Unmarshal(raw, &r); err != nil {
		return sdk.SummarizeResult{}, fmt.Errorf("the answer is not a chat completion: %w", err)
	}
	if len(r.Choices) == 0 {
		return sdk.SummarizeResult{}, errors.New("the answer has no choice")
	}
	c := r.Choices[0]
	if c.Message.Refusal != nil && *c.Message.Refusal != "" {
		return sdk.SummarizeResult{}, fmt.Errorf("the model refused: %s", snippet([]byte(*c.Message.Refusal)))
	}
	text := ""
	if c.Message.Content != nil {
		text = *c.Message.Content
	}
	if err := finished(c.FinishReason, "stop", "length", "content_filter"); err != nil {
		return sdk.SummarizeResult{}, err
	}
	return sdk.SummarizeResult{Text: text, InputTokens: r.Usage.Prompt, OutputTokens: r.Usage.Completion}, nil
}

func parseAnthropic(raw []byte) (sdk.SummarizeResult, error) {
	var r struct {
		Content []struct {
			Type string `json:"type"`
			Text string `json:"text"`
		} `json:"content"`
		StopReason string `json:"stop_reason"`
		Usage      struct {
			Input  int `json:"input_tokens"`
			Output int `json:"output_tokens"`
		} `json:"usage"`
	}
	if err := json.Unmarshal(raw, &r); err != nil {
		return sdk.SummarizeResult{}, fmt.Errorf("the answer is not a message: %w", err)
	}
	if err := finished(r.StopReason, "end_turn", "max_tokens", "refusal"); err != nil {
		return sdk.SummarizeResult{}, err
	}
	var b strings.Builder
	for _, c := range r.Content {
		if c.Type == "text" {
			b.WriteString(c.Text)
		}
	}
	return sdk.SummarizeResult{Text: b.String(), InputTokens: r.Usage.Input, OutputTokens: r.Usage.Output}, nil
}

func parseGemini(raw []byte) (sdk.SummarizeResult, error) {
	var r struct {
		Candidates []struct {
			Content struct {
				Parts []struct {
					Text    string `json:"text"`
					Thought bool   `json:"thought"`
				} `json:"parts"`
			} `json:"content"`
			FinishReason string `json:"finishReason"`
		} `json:"candidates"`
		PromptFeedback struct {
			BlockReason string `json:"blockReason"`
		} `json:"promptFeedback"`
		Usage struct {
			Prompt     int `json:"promptTokenCount"`
			Candidates int `json:"candidatesTokenCount"`
		} `json:"usageMetadata"`
	}
	if err := json.Unmarshal(raw, &r); err != nil {
		return sdk.SummarizeResult{}, fmt.Errorf("the answer is not a generateContent response: %w", err)
	}
	if r.PromptFeedback.BlockReason != "" {
		return sdk.SummarizeResult{}, fmt.Errorf("the model refused: prompt blocked (%s)", r.PromptFeedback.BlockReason)
	}
	if len(r.Candidates) == 0 {
		return sdk.SummarizeResult{}, errors.New("the answer has no candidate")
	}
	c := r.Candidates[0]
	if err := finished(c.FinishReason, "STOP", "MAX_TOKENS", "SAFETY"); err != nil {
		return sdk.SummarizeResult{}, err
	}
	var b strings.Builder
	for _, p := range c.Content.Parts {
		if !p.Thought {
			b.WriteString(p.Text)
		}
	}
	return sdk.SummarizeResult{Text: b.String(), InputTokens: r.Usage.Prompt, OutputTokens: r.Usage.Candidates}, nil
}

// finished turns a finish reason into an error unless it is stop: cut
// off at the limit (a summary cut short is not one), or refused.
func finished(reason, stop, length, refused string) error {
	switch reason {
	case length:
		return errors.New("the answer was cut off at its token limit")
	case refused:
		return fmt.Errorf("the model refused (%s)", reason)
	case stop, "":
		return nil
	}
	return fmt.Errorf("the answer ended with %q", reason)
}

// Render is the span as the model reads it: the previous summary, then
// each message on a line of its own headed by its id and role (a tool
// call with its name and arguments, a result with its tool), a long text
// cut to its head and tail, then the limit.
func Render(req sdk.SummarizeRequest) string {
	var b strings.Builder
	if req.Previous != "" {
		b.WriteString("<previous_summary>\n")
		b.WriteString(req.Previous)
		b.WriteString("\n</previous_summary>\n")
	}
	b.WriteString("<messages>\n")
	for _, m := range req.Messages {
		head := m.ID + " " + m.Role
		if m.ToolName != "" {
			head += " " + m.ToolName
		}
		fmt.Fprintf(&b, "[%s] %s\n", head, clip(m.Text()))
		for _, tc := range m.ToolCalls {
			fmt.Fprintf(&b, "[%s calls %s] %s\n", m.ID, tc.Name, clip(tc.Arguments))
		}
	}
	b.WriteString("</messages>\n")
	fmt.Fprintf(&b, "Write the new summary, replacing the previous one, in at most %d tokens.", outputLimit(req))
	return b.String()
}

// clip cuts s to MessageChars: its head and tail around a marker.
func clip(s string) string {
	if len(s) <= MessageChars {
		return s
	}
	head, tail := s[:MessageChars*2/3], s[len(s)-MessageChars/3:]
	for !utf8.ValidString(head) {
		head = head[:len(head)-1]
	}
	for !utf8.ValidString(tail) {
		tail = tail[1:]
	}
	return head + fmt.Sprintf(" [... %d bytes left out ...] ", len(s)-len(head)-len(tail)) + tail
}
