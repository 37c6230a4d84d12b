package callpath

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"

	"github.com/ctxhost/ctxhost/engine"
	"github.com/ctxhost/ctxhost/internal/jsonprefix"
	"github.com/ctxhost/ctxhost/provider"
	"github.com/ctxhost/ctxhost/sdk"
)

// The tools ctxhost answers itself. A profile with recall_tool or
// memory { tools = true } has ctxhost's tools (ctxhost_recall, the memory
// tools) in every request that goes upstream, after the caller's; the
// caller never sees them. The answer decides what happens:
//
//   - no call of ctxhost's tools: the answer goes to the caller as it came;
//   - only calls of ctxhost's tools (text may come with them): ctxhost
//     answers each, records the answer and the results in the session
//     (hidden from the caller's view of the conversation), prepares the
//     context again and calls the model again: a round. The caller sees
//     nothing of the round, neither its text nor its calls;
//   - calls of ctxhost's tools and of the caller's (mixed): ctxhost
//     answers its own and records them with their results; the answer
//     goes to the caller without ctxhost's calls (its text and the
//     caller's calls), and the call ends there: the caller's calls need
//     the caller.
//
// After the upstream's ToolRounds rounds the next answer goes to the
// caller whatever it calls, ctxhost's calls unanswered, and
// ToolRoundsHeader says so. A tool the caller defines itself under one of
// ctxhost's names is the caller's. A streamed answer is held until its
// first tool call starts or it ends: a call of the caller's tools first
// has it relayed from there on (ctxhost's later calls taken out), one of
// ctxhost's first has it held to its end, then relayed or answered.

// ToolRoundsHeader is set on an answer that came after rounds in which
// ctxhost answered its own tools: the rounds' count, followed by
// "; limit" when the upstream's tool_rounds ran out and the answer went
// to the caller with calls of ctxhost's tools unanswered.
const ToolRoundsHeader = "Ctxhost-Tool-Rounds"

// ownTools are ctxhost's tools in one call.
type ownTools struct {
	ctx   context.Context
	defs  []sdk.ToolDefinition
	names map[string]bool
	limit int
	// rounds is how many rounds ctxhost answered so far.
	rounds int
	// verdict is what the last answer read is (see decide).
	verdict verdict
}

// verdict is what an answer is to ctxhost.
type verdict int

const (
	toCaller   verdict = iota // no call of ctxhost's: the answer goes as it came
	ownRound                  // only ctxhost's calls: answered, the model called again
	mixedCalls                // both: ctxhost's answered, the rest goes to the caller
	atLimit                   // only ctxhost's, but the rounds ran out: goes as it came
)

// ownToolsOf returns ctxhost's tools the call offers upstream, nil when
// none (the upstream's tool_rounds 0, a count, a profile without them).
func (c *call) ownToolsOf(ctx context.Context, es *engine.Session) *ownTools {
	if c.u.ToolRounds <= 0 || c.counting {
		return nil
	}
	defs := es.OwnTools()
	if len(defs) == 0 {
		return nil
	}
	o := &ownTools{ctx: ctx, names: map[string]bool{}, limit: c.u.ToolRounds}
	for _, d := range defs {
		if !slices.ContainsFunc(c.req.tools.Tools, func(t sdk.ToolDefinition) bool { return t.Name == d.Name }) {
			o.defs = append(o.defs, d)
			o.names[d.Name] = true
		}
	}
	if len(o.defs) == 0 {
		return nil
	}
	return o
}

func (o *ownTools) isOwn(name string) bool { return o != nil && o.names[name] }

// decide reads the answer m (ok: there is one) and keeps its verdict.
func (o *ownTools) decide(m sdk.Message, ok bool) verdict {
	n := 0
	for _, tc := range m.ToolCalls {
		if o.isOwn(tc.Name) {
			n++
		}
	}
	switch {
	case !ok || n == 0:
		o.verdict = toCaller
	case n < len(m.ToolCalls):
		o.verdict = mixedCalls
	case o.rounds >= o.limit:
		o.verdict = atLimit
	default:
		o.verdict = ownRound
	}
	return o.verdict
}

// header sets ToolRoundsHeader on the answer going to the caller.
func (o *ownTools) header(h http.Header) {
	switch {
	case o.verdict == atLimit:
		h.Set(ToolRoundsHeader, strconv.Itoa(o.rounds)+"; limit")
	case o.rounds > 0:
		h.Set(ToolRoundsHeader, strconv.Itoa(o.rounds))
	}
}

// ownTurn runs a call that offers ctxhost's tools upstream: a round per
// answer that calls only them, until an answer goes to the caller. turn
// is the prepared turn, and is each round's once it is prepared.
func (c *call) ownTurn(ctx context.Context, es *engine.Session, turn *engine.Turn, own *ownTools) error {
	c.own = own
	defer func() {
		if own.rounds > 0 {
			c.h.metrics.toolRounds(c.u.Name, own.rounds, own.verdict == atLimit)
		}
	}()
	for {
		again, err := c.ownRoundTrip(ctx, es, *turn, own)
		if err != nil || !again {
			return err
		}
		own.rounds++
		if *turn, err = c.prepareAgain(ctx, es); err != nil {
			return err
		}
	}
}

// ownRoundTrip sends one upstream request and reads its answer; again:
// ctxhost answered its tools, the model is to be called again.
func (c *call) ownRoundTrip(ctx context.Context, es *engine.Session, turn engine.Turn, own *ownTools) (again bool, err error) {
	saved := c.req.fields
	c.req.fields = withOwnTools(c.d, saved, own.defs)
	out, err := c.upstreamBody(es, turn)
	c.req.fields = saved
	if err != nil {
		return false, err
	}
	p := turn.Prepared
	callerTokens := p.Before.Used
	if p.Cache != nil {
		callerTokens = p.Cache.Unmanaged.Total
	}
	c.h.metrics.prepared(c.u.Name, callerTokens, p.Budget.Used)
	end := c.phase("upstream")
	res, sent, err := c.send(ctx, out)
	defer sent.detach() // before the next round's prepare reuses the payload's memory
	if end(err); err != nil {
		return false, err
	}
	defer res.Body.Close()
	if res.StatusCode != http.StatusOK {
		c.relayError(res)
		return false, &callError{status: res.StatusCode, reason: statusReason(res.StatusCode), err: fmt.Errorf("upstream answered %s", res.Status)}
	}
	a := c.d.newAnswer(c.req)
	end = c.phase("relay")
	if c.req.stream {
		again, err = c.relayStreamOwn(ctx, res, a, es, own)
	} else {
		again, err = c.relayWholeOwn(res, a, es, own)
	}
	end(err)
	return again, err
}

// prepareAgain prepares the session's context for the next round, its
// changes held until the round's answer is recorded.
func (c *call) prepareAgain(ctx context.Context, es *engine.Session) (engine.Turn, error) {
	var turn engine.Turn
	end := c.phase("prepare")
	err := es.Hold(func() error {
		var err error
		turn, err = es.Prepare(ctx, "")
		return err
	})
	end(err)
	if err != nil {
		return turn, failf(http.StatusUnprocessableEntity, "prepare", "ctxhost could not fit the conversation after answering its own tools: %v", err)
	}
	c.tracePrepared(turn.Prepared)
	return turn, nil
}

// relayWholeOwn reads a whole answer and either answers ctxhost's calls
// in it (again) or passes it on, recorded, ctxhost's calls taken out of
// a mixed one.
func (c *call) relayWholeOwn(res *http.Response, a answer, es *engine.Session, own *ownTools) (bool, error) {
	limit := c.u.maxEvent()
	if res.ContentLength > int64(limit) {
		return false, failf(http.StatusBadGateway, "answer_too_large", "upstream %q answered over %d bytes (the upstream's max_answer_bytes)", c.u.Name, limit)
	}
	in, err := c.admitAnswer(res.Body, res.ContentLength)
	if err != nil {
		return false, err
	}
	body, err := readAnswerBody(in, res.ContentLength, limit)
	if rerr := c.refusedRead(err, "the upstream's answer", http.StatusBadGateway); rerr != nil {
		return false, rerr
	}
	switch {
	case err == errAnswerTooLarge:
		return false, failf(http.StatusBadGateway, "answer_too_large", "upstream %q answered over %d bytes (the upstream's max_answer_bytes)", c.u.Name, limit)
	case err != nil:
		return false, failf(http.StatusBadGateway, "dropped", "upstream connection lost before the answer was whole: %v", redactURL(err))
	}
	stop := c.working() // reading a large answer takes time in proportion to it
	err = a.Whole(body)
	stop()
	if err != nil {
		return false, failf(http.StatusBadGateway, "bad_answer", "upstream answer unreadable: %v", err)
	}
	m, ok, u := a.Result()
	switch own.decide(m, ok) {
	case ownRound:
		return true, c.recordOwnRound(es, m, u)
	case mixedCalls:
		if body, err = withoutOwnCalls(c.d, body, own.isOwn); err != nil {
			return false, failf(http.StatusBadGateway, "bad_answer", "upstream answer unreadable: %v", err)
		}
	}
	if err := c.record(es, a); err != nil {
		return false, err
	}
	copyResponseHeaders(c.w.Header(), res.Header)
	own.header(c.w.Header())
	c.w.Header().Set("Content-Length", strconv.Itoa(len(body)))
	c.status = http.StatusOK
	c.wrote = true
	c.rest = body // written by deliver, the session released
	return false, nil
}

// recordOwnRound answers ctxhost's calls in m, an answer of them alone,
// and records m (hidden from the caller) and the results with the
// answer's usage, in one save.
func (c *call) recordOwnRound(es *engine.Session, m sdk.Message, u provider.Usage) error {
	defer c.working()()
	m = c.ownCallIDs(m)
	end := c.phase("record")
	err := es.Batch(func() error {
		if _, _, err := es.AnswerToolCalls(c.own.ctx, m, c.own.isOwn, true); err != nil {
			return failf(http.StatusInternalServerError, "record", "answer ctxhost's tools: %v", err)
		}
		if u.Known {
			if err := es.ReportUsage(u.Prompt, u.Completion); err != nil {
				return failf(http.StatusInternalServerError, "record", "report usage: %v", err)
			}
		}
		return nil
	})
	end(err)
	if err != nil {
		return c.unsaved(err)
	}
	if u.Known {
		c.h.metrics.usage(c.u.Name, u)
	}
	for _, tc := range m.ToolCalls {
		c.h.metrics.ownToolCall(c.u.Name, tc.Name)
	}
	c.held = es.MessageCount() // the caller's conversation comes to the rounds' turns too
	return nil
}

// addAnswer adds the call's answer m to the history: with ctxhost's
// calls in it answered and their results after it when it is mixed.
func (c *call) addAnswer(es *engine.Session, m sdk.Message) (sdk.Message, error) {
	if c.own == nil || c.own.verdict != mixedCalls {
		return es.AddMessage(m)
	}
	m = c.ownCallIDs(m)
	added, _, err := es.AnswerToolCalls(c.own.ctx, m, c.own.isOwn, false)
	if err == nil {
		for _, tc := range m.ToolCalls {
			if c.own.isOwn(tc.Name) {
				c.h.metrics.ownToolCall(c.u.Name, tc.Name)
			}
		}
	}
	return added, err
}

// ownCallIDs gives Gemini calls without ids of the provider's (named
// after their place, see gemini.DecodeParts) ids that the caller's view
// keeps: the caller's calls are numbered among themselves, as the caller
// decodes them when it sends them back without ctxhost's, and ctxhost's
// get ids of their own (a round's answer stands at the same place as the
// answer the caller gets).
func (c *call) ownCallIDs(m sdk.Message) sdk.Message {
	if _, ok := c.d.(geminiDialect); !ok {
		return m
	}
	prefix := "call-" + strconv.Itoa(c.req.turns) + "-"
	m.ToolCalls = slices.Clone(m.ToolCalls)
	theirs := 0
	for i := range m.ToolCalls {
		tc := &m.ToolCalls[i]
		if !strings.HasPrefix(tc.ID, prefix) {
			continue
		}
		if c.own.isOwn(tc.Name) {
			tc.ID = fmt.Sprintf("ctxhost-%d-%d-%d", c.req.turns, c.own.rounds, i)
			continue
		}
		tc.ID = prefix + strconv.Itoa(theirs)
		theirs++
	}
	return m
}

// agentView is msgs as the caller sees them: without the turns of the
// rounds ctxhost answered itself (MetaHidden) and the results of its
// tools, and without its calls in an answer the caller got. msgs itself
// when it holds none of them.
func agentView(msgs []sdk.Message) []sdk.Message {
	i := slices.IndexFunc(msgs, ownMarked)
	if i < 0 {
		return msgs
	}
	out := append(make([]sdk.Message, 0, len(msgs)), msgs[:i]...)
	for _, m := range msgs[i:] {
		if !ownMarked(m) {
			out = append(out, m)
			continue
		}
		if m.Metadata[engine.MetaHidden] == "true" || m.Metadata[engine.MetaOwnResult] == "true" {
			continue
		}
		ids := engine.OwnCallIDs(&m)
		m.ToolCalls = slices.DeleteFunc(slices.Clone(m.ToolCalls), func(tc sdk.ToolCall) bool { return slices.Contains(ids, tc.ID) })
		out = append(out, m)
	}
	return out
}

// ownMarked reports whether m is (or holds) a turn of ctxhost's tools.
func ownMarked(m sdk.Message) bool {
	if len(m.Metadata) == 0 {
		return false
	}
	return m.Metadata[engine.MetaHidden] != "" || m.Metadata[engine.MetaOwnResult] != "" || m.Metadata[engine.MetaOwnCalls] != ""
}

// withOwnTools returns fields with ctxhost's tools after the caller's
// tools, in d's shape.
func withOwnTools(d dialect, fields jsonprefix.Object, defs []sdk.ToolDefinition) jsonprefix.Object {
	var add []any
	switch d.(type) {
	case chatDialect:
		for _, t := range defs {
			add = append(add, map[string]any{"type": "function", "function": map[string]any{"name": t.Name, "description": t.Description, "parameters": schemaOf(t)}})
		}
	case responsesDialect:
		for _, t := range defs {
			add = append(add, map[string]any{"type": "function", "name": t.Name, "description": t.Description, "parameters": schemaOf(t)})
		}
	case anthropicDialect:
		for _, t := range defs {
			add = append(add, map[string]any{"name": t.Name, "description": t.Description, "input_schema": schemaOf(t)})
		}
	case geminiDialect:
		decls := make([]any, len(defs))
		for i, t := range defs {
			decls[i] = map[string]any{"name": t.Name, "description": t.Description, "parametersJsonSchema": schemaOf(t)}
		}
		add = []any{map[string]any{"functionDeclarations": decls}}
	}
	var tools []json.RawMessage
	if raw := fields.Get("tools"); raw != nil && string(raw) != "null" {
		_ = json.Unmarshal(raw, &tools) // the caller's tools were read as an array (head)
	}
	for _, t := range add {
		b, _ := json.Marshal(t)
		tools = append(tools, b)
	}
	all, _ := json.Marshal(tools)
	return fields.With("tools", all)
}

// schemaOf is a tool's parameters schema (an empty object's when none).
func schemaOf(t sdk.ToolDefinition) json.RawMessage {
	if len(t.Parameters) == 0 {
		return json.RawMessage(`{"type":"object","properties":{}}`)
	}
	return t.Parameters
}

// unsaved is a record's failure: nothing of the answer was saved (the
// store's failure is a 503 the caller may retry).
func (c *call) unsaved(err error) error {
	if errors.Is(err, engine.ErrNotPersisted) {
		c.h.log.Error("record the answer: the store failed", "session", c.session, "error", err)
		err = failf(http.StatusServiceUnavailable, "unsaved", "the answer could not be saved (the store failed, see the server log); nothing of the call was applied, retry it")
	}
	return errors.Join(err, ErrUnsaved)
}
