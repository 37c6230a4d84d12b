package codex

import (
	"strings"

	"github.com/ctxhost/ctxhost/provider/openai"
	"github.com/ctxhost/ctxhost/sdk"
	"github.com/ctxhost/ctxhost/sdk/assembly"
)

// buildRequest builds the Chat Completions body:
//   - a "system" message with the system body, left out when empty;
//   - the history in order: user messages (content prefixed "{speaker}: "
//     when named), assistant messages (content left out when empty and
//     tool calls present; tool_calls [{id, type "function", function {name,
//     arguments}}], arguments "{}" when empty), tool messages with
//     tool_call_id, system-role messages (e.g. the omitted-messages marker)
//     as "system" messages where they stand; a tool message whose call is
//     not in the history (cut off by a window) becomes a user message
//     rendered as in the text formats, as the API rejects a tool message
//     without its call;
//   - a final user message: when there are both a context block (team
//     task and supporting context) and an input, its content is an array
//     of two text parts, context then input; otherwise a plain string;
//   - messages with nothing to show (blank content, no tool calls) are
//     left out;
//   - user messages with parts carry an array of text, image_url (a data:
//     URL for inline bytes) and file parts; assistant and tool messages
//     their text (thinking and reasoning items are not sent to this API);
//   - the request's tools as tools [{type "function", function {name,
//     description, parameters}}], tool_choice ("auto", "none",
//     "required" or {type "function", function {name}}) and
//     response_format {type "json_schema", json_schema {name, schema,
//     strict}}.
//
// prompt_cache_key carries the option of that name when set. Chat
// Completions needs at least one message; a request with nothing at
// all gets an empty user message so the body stays valid.
//
// Each history message is encoded once per stream (apiCache) and the
// encodings joined into the stream's append-only head (apiHeads), the
// body up to the end of the history; the rest (the final message, the
// cache key, the closing brackets) is built each time. The bytes are
// those of the whole body encoded at once.
func (c *caches) buildRequest(req sdk.AssembleRequest, p assembly.Parts, model, cacheKey string) (sdk.AssembleResult, error) {
	if model = strings.TrimSpace(model); model == "" {
		model = DefaultModel
	}
	frags := c.apiCache.Derive(req, p.History, deriveFragment)
	enc, err := assembly.Marshal(model)
	if err != nil {
		return sdk.AssembleResult{}, err
	}
	prefix := make([]byte, 0, 64+len(enc)+len(p.System))
	prefix = append(prefix, `{"model":`...)
	prefix = append(prefix, enc...)
	prefix = append(prefix, `,"messages":[`...)
	st := joinState{failed: -1}
	if p.System != "" {
		if enc, err = assembly.Marshal(openai.Message{Role: sdk.RoleSystem, Content: p.System}); err != nil {
			return sdk.AssembleResult{}, err
		}
		prefix = joinMessage(prefix, &st, 0, fragment{enc: enc})
	}
	head, st := c.apiHeads.Head(req, prefix, st, frags)
	if st.failed >= 0 {
		return sdk.AssembleResult{}, frags[st.failed].err
	}
	n := st.n
	b := make([]byte, 0, 64+len(p.Input))
	var final *openai.Message
	if last := openai.FinalContent(p.ContextBlock(), p.Input); last != nil {
		final = &openai.Message{Role: sdk.RoleUser, Content: last}
	} else if n == 0 {
		final = &openai.Message{Role: sdk.RoleUser, Content: ""}
	}
	if final != nil {
		if enc, err = assembly.Marshal(final); err != nil {
			return sdk.AssembleResult{}, err
		}
		b = joinMessage(b, &st, 0, fragment{enc: enc})
	}
	b = append(b, "]"...)
	tools, err := p.RequestTools()
	if err != nil {
		return sdk.AssembleResult{}, err
	}
	if b, err = openai.AppendTools(b, tools); err != nil {
		return sdk.AssembleResult{}, err
	}
	if key := strings.TrimSpace(cacheKey); key != "" {
		if enc, err = assembly.Marshal(key); err != nil {
			return sdk.AssembleResult{}, err
		}
		b = append(b, `,"prompt_cache_key":`...)
		b = append(b, enc...)
	}
	return sdk.AssembleResult{PayloadHead: head, Payload: append(b, "}"...)}, nil
}

// joinState is what joining the messages carries from one to the next:
// how many are written, and the index of the first history message that
// failed to encode (-1: none).
type joinState struct {
	n, failed int
}

// joinMessage appends the i-th history message encoded (nothing when it
// shows nothing), after a comma when messages were written before.
func joinMessage(b []byte, st *joinState, i int, f fragment) []byte {
	if f.err != nil && st.failed < 0 {
		st.failed = i
	}
	if f.enc == nil {
		return b
	}
	if st.n > 0 {
		b = append(b, ',')
	}
	st.n++
	return append(b, f.enc...)
}

// fragment is one history message as encoded in messages; enc is nil
// when the message shows nothing.
type fragment struct {
	enc []byte
	err error
}

// deriveFragment encodes one history message.
func deriveFragment(i int, m sdk.Message, ctx *assembly.MessageContext) fragment {
	if assembly.IsBlank(m) {
		return fragment{}
	}
	msg := openai.HistoryMessage(m)
	if at := ctx.FirstCall(m.ToolCallID, ""); m.Role == sdk.RoleTool && (at < 0 || at > i) { // its call was cut off: keep it as text
		msg = openai.Message{Role: sdk.RoleUser, Content: ctx.RenderMessage(m)}
	}
	enc, err := assembly.Marshal(msg)
	return fragment{enc: enc, err: err}
}
