package callpath

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"net/http"
	"path"
	"strings"

	"github.com/ctxhost/ctxhost/engine"
	"github.com/ctxhost/ctxhost/provider"
	"github.com/ctxhost/ctxhost/provider/openai"
)

// MinReserve is the least a call reserves for the answer, whatever output
// limit it asks for: a margin for the provider's count of the prompt.
const MinReserve = 256

// MinPromptShare is the least share of the window a call leaves for the
// prompt: an output limit larger than the rest is reserved only up to it.
const MinPromptShare = 0.25

// modelWindow is a model's window and its reserve for the answer when a
// call sets no output limit.
type modelWindow struct {
	name             string
	id               string   // the provider's model name (a fallback's)
	match            []string // glob patterns on the call's model
	window, reserved int
}

// windows are the model windows of an upstream's calls: those whose
// patterns match the call's model, in their declared order, else the
// profile's model.
type windows struct {
	byModel []modelWindow
	profile modelWindow
	// fallback is where a call goes whose pinned content cannot fit its
	// model's window (nil: none).
	fallback *modelWindow
}

// windowsOf reads the model blocks of eng's configuration.
func windowsOf(eng *engine.Engine) windows {
	var w windows
	for _, m := range eng.Config.Models {
		mw := modelWindow{name: m.Name, match: m.Match, window: m.ContextWindow, reserved: m.ReservedForResponse}
		if m.Name == eng.Context.Model {
			w.profile = mw
		}
		if len(m.Match) > 0 {
			w.byModel = append(w.byModel, mw)
		}
	}
	return w
}

// of returns the window of a call naming model ("" or unmatched: the
// profile's).
func (w windows) of(model string) modelWindow {
	if m, ok := w.matching(model); ok {
		return m
	}
	return w.profile
}

// matching is the first model window whose patterns match model.
func (w windows) matching(model string) (modelWindow, bool) {
	if model != "" {
		for _, m := range w.byModel {
			for _, p := range m.match {
				if ok, _ := path.Match(p, model); ok {
					return m, true
				}
			}
		}
	}
	return modelWindow{}, false
}

// reserveFor is the reserve of a call on m asking for at most limit
// output tokens (0: it sets none, and m's own reserve holds): the limit,
// at least MinReserve, leaving at least MinPromptShare of the window.
func (m modelWindow) reserveFor(limit int) int {
	if limit <= 0 {
		return m.reserved
	}
	most := m.window - int(math.Ceil(float64(m.window)*MinPromptShare))
	return max(0, min(max(limit, MinReserve), most))
}

// callModel is the model the caller's request names ("": none).
func callModel(d dialect, req *request) string {
	if _, ok := d.(geminiDialect); ok {
		return req.model
	}
	raw := req.fields.Get("model")
	if raw == nil {
		return ""
	}
	if s, ok := provider.JSONString(raw); ok {
		return s
	}
	var s string
	if json.Unmarshal(raw, &s) != nil {
		return ""
	}
	return s
}

// outputLimit is the output limit the caller's request sets (0: none):
// max_completion_tokens or max_tokens on Chat Completions,
// max_output_tokens on Responses, max_tokens on Anthropic Messages,
// generationConfig.maxOutputTokens on Gemini.
func outputLimit(d dialect, req *request) int {
	n := func(raw json.RawMessage) int {
		var v float64
		if raw == nil || json.Unmarshal(raw, &v) != nil || v <= 0 {
			return 0
		}
		return int(min(v, math.MaxInt32))
	}
	switch d.(type) {
	case chatDialect:
		if v := n(req.fields.Get("max_completion_tokens")); v > 0 {
			return v
		}
		return n(req.fields.Get("max_tokens"))
	case responsesDialect:
		return n(req.fields.Get("max_output_tokens"))
	case anthropicDialect:
		return n(req.fields.Get("max_tokens"))
	case geminiDialect:
		var gc struct {
			MaxOutputTokens json.RawMessage `json:"maxOutputTokens"`
		}
		if raw := req.fields.Get("generationConfig"); raw != nil && json.Unmarshal(raw, &gc) == nil {
			return n(gc.MaxOutputTokens)
		}
	}
	return 0
}

// setWindow bounds the call's turn by the window of the model it names
// and the reserve of the output limit it asks for; it returns them.
func (c *call) setWindow(es *engine.Session) (window, reserved int, err error) {
	m := c.u.windows.of(callModel(c.d, c.req))
	reserved = m.reserveFor(outputLimit(c.d, c.req))
	if err := es.SetWindow(m.window, reserved); err != nil {
		return 0, 0, fmt.Errorf("model %q: %w", m.name, err)
	}
	return m.window, reserved, nil
}

// fallBack prepares the turn again at the upstream's fallback model when
// err says the pinned content cannot fit the window of the call's model
// and the fallback's window is larger (not for a token count, which
// counts for the model named). On success the call goes to the fallback
// model (its request names it) and says so in FallbackHeader. It returns
// the window and reserve tried last, for the provider's error.
func (c *call) fallBack(ctx context.Context, es *engine.Session, err error, window, reserved int) (engine.Turn, int, int, error) {
	var ow *engine.OverWindowError
	fb := c.u.windows.fallback
	if !errors.As(err, &ow) || fb == nil || fb.window <= window || c.counting {
		return engine.Turn{}, window, reserved, err
	}
	reserved = fb.reserveFor(outputLimit(c.d, c.req))
	if serr := es.SetWindow(fb.window, reserved); serr != nil {
		return engine.Turn{}, window, reserved, fmt.Errorf("fallback model %q: %w", fb.id, serr)
	}
	turn, err := es.Prepare(ctx, "")
	if err != nil {
		return turn, fb.window, reserved, err
	}
	c.fallback = fb.id
	if _, ok := c.d.(geminiDialect); !ok {
		id, _ := json.Marshal(fb.id)
		c.req.fields = c.req.fields.With("model", id)
	}
	c.w.Header().Set(FallbackHeader, fb.id)
	c.h.metrics.fellBack(c.u.Name, fb.id)
	return turn, fb.window, reserved, nil
}

// upstreamURI is the path and query the call goes to upstream: its own,
// with the fallback model in place of the one a Gemini path names.
func (c *call) upstreamURI() string {
	uri := c.d.upstreamPath(c.r, c.req)
	if _, ok := c.d.(geminiDialect); ok && c.fallback != "" {
		uri = strings.Replace(uri, "/models/"+c.req.model+":", "/models/"+c.fallback+":", 1)
	}
	return uri
}

// overWindow answers a turn whose pinned content cannot fit the window
// with the provider's own context-length error (nil: err is another).
func (c *call) overWindow(err error, window, reserved int) *callError {
	var ow *engine.OverWindowError
	if !errors.As(err, &ow) {
		return nil
	}
	prompt := ow.Used
	var body []byte
	switch c.d.(type) {
	case anthropicDialect:
		msg := fmt.Sprintf("prompt is too long: %d tokens > %d maximum", prompt, window)
		if prompt <= window {
			msg = fmt.Sprintf("input length and `max_tokens` exceed context limit: %d + %d > %d, decrease input length or `max_tokens` and try again", prompt, reserved, window)
		}
		body = unescapedJSON(map[string]any{"type": "error", "error": map[string]any{"type": "invalid_request_error", "message": msg}})
	case geminiDialect:
		body = unescapedJSON(map[string]any{"error": map[string]any{"code": http.StatusBadRequest,
			"message": fmt.Sprintf("The input token count (%d) exceeds the maximum number of tokens allowed (%d).", prompt, window-reserved),
			"status":  "INVALID_ARGUMENT"}})
	default:
		param := "messages"
		if _, ok := c.d.(responsesDialect); ok {
			param = "input"
		}
		msg := fmt.Sprintf("This model's maximum context length is %d tokens. However, your messages resulted in %d tokens. Please reduce the length of the messages.", window, prompt)
		if prompt <= window {
			msg = fmt.Sprintf("This model's maximum context length is %d tokens. However, you requested %d tokens (%d in the messages, %d in the completion). Please reduce the length of the messages or completion.",
				window, prompt+reserved, prompt, reserved)
		}
		body = openai.ProviderError(msg, param, "context_length_exceeded")
	}
	return providerError(http.StatusBadRequest, "context_length", body, "ctxhost could not fit the conversation: %v", err)
}

// unescapedJSON is v in JSON with <, > and & as they are, as the
// providers write their messages.
func unescapedJSON(v any) []byte {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(v)
	return bytes.TrimRight(b.Bytes(), "\n")
}
