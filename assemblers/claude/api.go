package claude

import (
	"strconv"
	"strings"

	"github.com/ctxhost/ctxhost/provider/anthropic"
	"github.com/ctxhost/ctxhost/sdk"
	"github.com/ctxhost/ctxhost/sdk/assembly"
)

// ContinuationText opens the messages when the history starts with an
// assistant turn: the Messages API wants the first message from the user.
const ContinuationText = "(continued)"

// buildRequest builds the Messages API body:
//   - system: the system body, left out when empty;
//   - messages: user turns as "user" text blocks, assistant turns as
//     "assistant" text then one tool_use block {id, name, input} per tool
//     call, tool results as tool_result blocks {tool_use_id, content} in a
//     user turn, system-role messages (e.g. the omitted-messages marker) as
//     user text blocks; then a final user turn with the team task and
//     supporting context as one text block and the input as another;
//   - consecutive turns of one role are merged into one message with
//     several blocks, so roles strictly alternate;
//   - a tool result whose tool_use is not in the history (cut off by a
//     window) becomes a user text block rendered as in the text formats,
//     as the API rejects a tool_result without its tool_use;
//   - when the first message would be the assistant's, a user message
//     with ContinuationText is put before it;
//   - messages with nothing to show (blank content, no tool calls) are
//     left out, as the API rejects empty text blocks;
//   - parts: images and documents as image and document blocks (base64
//     or url sources; a document given as text a text source), thinking
//     and redacted thinking blocks of Anthropic's own kept in place on
//     assistant turns (first, as the API wants them; other providers'
//     reasoning is left out), tool results with parts as text and image
//     blocks;
//   - the request's tools as tools [{name, description, input_schema}]
//     and tool_choice {type auto|any|tool|none, name};
//   - prompt-caching breakpoints (cache_control, unless the option cache
//     is "off"), at most three of the four the API allows, all on stable
//     content: the system text (then a list of one text block); the last
//     system-role history message, which is the omitted-messages marker
//     closing the compacted region; and the last block of the history,
//     the rolling tail, so the next turn reads the whole history from the
//     cache. The volatile final turn (context and input) comes after them.
//
// Each history message's blocks are encoded once per stream (apiCache)
// and joined into the stream's append-only head (apiHeads): the body up
// to the last history message, the marker encoded again with
// cache_control. The rest (the last history message, its last block the
// rolling breakpoint, the final turn and the closing brackets) is built
// each time. The bytes are those of the whole body encoded at once.
func (c *caches) buildRequest(p assembly.Parts, req sdk.AssembleRequest) (sdk.AssembleResult, error) {
	maxTokens, err := maxTokens(req)
	if err != nil {
		return sdk.AssembleResult{}, err
	}
	cache, err := cacheOption(req)
	if err != nil {
		return sdk.AssembleResult{}, err
	}
	model := req.Options[OptionModel]
	if model == "" {
		model = DefaultModel
	}
	frags := c.apiCache.Derive(req, p.History, deriveFragment)
	sc := c.apiScans.Fold(req, scan{marker: -1, last: -1, failed: -1}, frags)
	if sc.failed >= 0 {
		return sdk.AssembleResult{}, frags[sc.failed].err
	}
	marker, last := sc.marker, sc.last
	prefix := append(make([]byte, 0, 128+len(p.System)), "{"...)
	if prefix, err = assembly.AppendField(prefix, "model", model); err != nil {
		return sdk.AssembleResult{}, err
	}
	prefix = append(prefix, `"max_tokens":`...)
	prefix = append(strconv.AppendInt(prefix, int64(maxTokens), 10), ',')
	if p.System != "" {
		var system any = p.System
		if cache {
			blk := anthropic.TextBlock(p.System)
			blk.CacheControl = anthropic.Ephemeral
			system = []anthropic.Block{blk}
		}
		if prefix, err = assembly.AppendField(prefix, "system", system); err != nil {
			return sdk.AssembleResult{}, err
		}
	}
	tools, err := p.RequestTools()
	if err != nil {
		return sdk.AssembleResult{}, err
	}
	if prefix, err = anthropic.AppendTools(prefix, tools); err != nil {
		return sdk.AssembleResult{}, err
	}
	prefix = append(prefix, `"messages":[`...)
	init := joinState{marker: -1}
	if cache {
		init.marker = marker
	}
	inHead := frags
	if last >= 0 {
		inHead = frags[:last]
	}
	head, st := c.apiHeads.Head(req, prefix, init, inHead)
	b := make([]byte, 0, 256+len(p.Input))
	for i := len(inHead); i < len(frags); i++ {
		f := frags[i]
		if f.role == "" {
			continue
		}
		for k, e := range f.enc {
			if cache && (i == marker || i == last && k == len(f.enc)-1) {
				// A breakpoint: the marker closing the compacted region, or
				// the rolling tail of the history.
				blk := f.blocks[k]
				blk.CacheControl = anthropic.Ephemeral
				if e, err = anthropic.EncodeBlock(blk); err != nil {
					return sdk.AssembleResult{}, err
				}
			}
			b = addBlock(b, &st.role, f.role, e)
		}
	}
	for _, text := range []string{p.ContextBlock(), p.Input} {
		if text != "" {
			e, err := assembly.Marshal(anthropic.TextBlock(text))
			if err != nil {
				return sdk.AssembleResult{}, err
			}
			b = addBlock(b, &st.role, anthropic.RoleUser, e)
		}
	}
	if st.role != "" {
		b = append(b, "]}"...)
	}
	return sdk.AssembleResult{PayloadHead: head, Payload: append(b, "]}"...)}, nil
}

// scan is what buildRequest needs to know of the whole history before
// joining it: the indexes of the last message that shows something, of
// the last marker among those, and of the first that failed to encode
// (-1: none).
type scan struct {
	last, marker, failed int
}

// foldScan folds the i-th history message's fragment into sc.
func foldScan(sc *scan, i int, f fragment) {
	if f.err != nil && sc.failed < 0 {
		sc.failed = i
	}
	if f.role != "" {
		sc.last = i
		if f.marker {
			sc.marker = i
		}
	}
}

// joinState is the state of the messages array being written: the role
// of the message open ("" before the first), and the index of the history
// message that carries a breakpoint as the marker (-1: none).
type joinState struct {
	role   string
	marker int
}

// joinFragment appends the blocks of the i-th history message, the
// marker's with cache_control.
func joinFragment(b []byte, st *joinState, i int, f fragment) []byte {
	if f.role == "" {
		return b
	}
	for k, e := range f.enc {
		if i == st.marker {
			blk := f.blocks[k]
			blk.CacheControl = anthropic.Ephemeral
			e, _ = anthropic.EncodeBlock(blk) // the marker's is a text block, which always encodes
		}
		b = addBlock(b, &st.role, f.role, e)
	}
	return b
}

// addBlock appends one encoded block of role to the messages array after
// a message of *role: to it when the role is the same, else in a new
// message, opened by a ContinuationText user message when the first
// would be the assistant's.
func addBlock(b []byte, role *string, r string, enc []byte) []byte {
	switch {
	case r == *role:
		b = append(b, ',')
	case *role == "" && r == anthropic.RoleAssistant:
		cont, _ := assembly.Marshal(anthropic.TextBlock(ContinuationText)) // a string always encodes
		b = append(b, `{"role":"user","content":[`...)
		b = append(b, cont...)
		b = append(b, `]},`...)
		fallthrough
	case *role == "":
		b = append(append(append(b, `{"role":"`...), r...), `","content":[`...)
	default:
		b = append(append(append(b, `]},{"role":"`...), r...), `","content":[`...)
	}
	*role = r
	return append(b, enc...)
}

// fragment is one history message's blocks, each also encoded; role is
// empty when the message shows nothing; marker: a system-role message
// (the omitted-messages marker is one), a breakpoint when it is the last.
type fragment struct {
	role   string
	blocks []anthropic.Block
	enc    [][]byte
	marker bool
	err    error
}

// deriveFragment builds and encodes one history message's blocks.
func deriveFragment(i int, m sdk.Message, ctx *assembly.MessageContext) fragment {
	if assembly.IsBlank(m) {
		return fragment{}
	}
	f := fragment{role: anthropic.RoleUser}
	switch m.Role {
	case sdk.RoleAssistant:
		f.role, f.blocks = anthropic.RoleAssistant, anthropic.AssistantBlocks(m)
	case sdk.RoleTool:
		if at := ctx.FirstCall(m.ToolCallID, sdk.RoleAssistant); at < 0 || at >= i { // its tool_use was cut off: keep it as text
			f.blocks = []anthropic.Block{anthropic.TextBlock(ctx.RenderMessage(m))}
		} else {
			f.blocks = []anthropic.Block{anthropic.ToolResult(m)}
		}
	case sdk.RoleUser:
		f.blocks = anthropic.UserBlocks(m)
	default:
		f.blocks, f.marker = []anthropic.Block{anthropic.TextBlock(m.Content)}, true
	}
	f.enc = make([][]byte, len(f.blocks))
	for k, blk := range f.blocks {
		enc, err := anthropic.EncodeBlock(blk)
		if err != nil {
			return fragment{err: err}
		}
		f.enc[k] = enc
	}
	return f
}

// cacheOption reads the cache option: on unless "off".
func cacheOption(req sdk.AssembleRequest) (bool, error) {
	switch v := strings.TrimSpace(req.Options[OptionCache]); v {
	case "", "on":
		return true, nil
	case "off":
		return false, nil
	default:
		return false, sdk.InvalidArgs("option %s=%q: want on or off", OptionCache, v)
	}
}

func maxTokens(req sdk.AssembleRequest) (int, error) {
	if s, ok := req.Options[OptionMaxTokens]; ok {
		n, err := strconv.Atoi(strings.TrimSpace(s))
		if err != nil || n <= 0 {
			return 0, sdk.InvalidArgs("option %s=%q is not a positive integer", OptionMaxTokens, s)
		}
		return n, nil
	}
	if req.Budget.Reserved > 0 {
		return req.Budget.Reserved, nil
	}
	return DefaultMaxTokens, nil
}
