package callpath

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/ctxhost/ctxhost/engine"
	"github.com/ctxhost/ctxhost/internal/jsonprefix"
	"github.com/ctxhost/ctxhost/internal/lru"
	"github.com/ctxhost/ctxhost/provider/openai"
	"github.com/ctxhost/ctxhost/provider/responses"
	"github.com/ctxhost/ctxhost/sdk"
)

// recorded is what the call path keeps of one Responses answer the
// caller may name later (previous_response_id), or of one compaction
// (the compaction item of /v1/responses/compact's output): the session,
// and the place in its history the conversation came to.
type recorded struct {
	session string
	// held is the number of history messages up to the answer (or the
	// compacted conversation's end); last is the id of the last of them,
	// and digest identifies them (engine.Session.HistoryDigest), so that
	// a history replaced or rewound since is not taken for it.
	held   int
	last   string
	digest string
}

// responsesState is what the call path remembers of recent Responses
// answers, in memory: answers by response id, compactions by compaction
// item id, output items by item id. A restarted server knows none, and
// answers a call naming one as the provider answers a call naming what
// it does not hold.
type responsesState struct {
	answers *lru.Cache[string, recorded]
	items   *lru.Cache[string, json.RawMessage]
	// deleted are the responses deleted (DELETE /v1/responses/{id}).
	deleted *lru.Cache[string, struct{}]
}

// forget deletes response id: it is no longer resolved.
func (st *responsesState) forget(id string) {
	st.answers.Delete(id)
	st.deleted.Put(id, struct{}{})
}

// lookup finds what a Responses call refers to: a recorded answer by
// response id, an output item by item id.
type lookup struct {
	answer func(id string) (recorded, bool)
	item   func(id string) (json.RawMessage, bool)
}

// memoryLookup resolves references from what st remembers.
func memoryLookup(st *responsesState) lookup {
	return lookup{
		answer: func(id string) (recorded, bool) {
			if _, gone := st.deleted.Get(id); gone {
				return recorded{}, false
			}
			return st.answers.Get(id)
		},
		item: st.items.Get,
	}
}

// Sizes of responsesState.
const (
	recordedAnswers = 4096
	recordedItems   = 16384
)

func newResponsesState() *responsesState {
	return &responsesState{answers: lru.New[string, recorded](recordedAnswers), items: lru.New[string, json.RawMessage](recordedItems),
		deleted: lru.New[string, struct{}](recordedAnswers)}
}

// compactionMark opens the encrypted_content of the compaction items
// ctxhost makes, which stand for a conversation it holds.
const compactionMark = "ctxhost:"

// providerError is an error answered with body as the provider would
// answer it (its message, param and code), not ctxhost's.
func providerError(status int, reason string, body []byte, format string, a ...any) *callError {
	return &callError{status: status, reason: reason, err: fmt.Errorf(format, a...), body: body}
}

func previousNotFound(id string) *callError {
	return providerError(http.StatusBadRequest, "not_found",
		openai.ProviderError("Previous response with id '"+id+"' not found.", "previous_response_id", "previous_response_not_found"),
		"previous response %q not found", id)
}

// resolveResponses resolves what a Responses call names instead of
// sending it: previous_response_id continues the conversation recorded up
// to that answer, an item_reference is the output item of that id of an
// earlier answer, and a compaction item ctxhost made stands for the
// conversation it compacted (the items before it are that conversation's
// managed view). Input gets the items referred to in place of the
// references and previous_response_id is not sent upstream (the whole
// managed context is). What cannot be resolved is answered as OpenAI
// answers it: 400 for an unknown previous response, 404 for an unknown
// item.
func (c *call) resolveResponses(find lookup, deferMissing bool) error {
	req, st := c.req, c.h.responses
	if req.previous != "" && req.after == nil {
		r, ok := find.answer(req.previous)
		if !ok && deferMissing {
			req.unresolved = true
			return nil
		}
		if !ok {
			return previousNotFound(req.previous)
		}
		req.after = &r
		req.fields = req.fields.Without("previous_response_id")
	}
	if !bytes.Contains(req.raw, []byte(`"item_reference"`)) && !bytes.Contains(req.raw, []byte(`"compaction"`)) {
		return nil
	}
	var items []json.RawMessage
	if json.Unmarshal(req.raw, &items) != nil {
		return nil // a string, or invalid: the conversation's decoding says what is wrong
	}
	out := make([]json.RawMessage, 0, len(items))
	changed := false
	for i, it := range items {
		var head struct {
			Type             string `json:"type"`
			ID               string `json:"id"`
			EncryptedContent string `json:"encrypted_content"`
		}
		_ = json.Unmarshal(it, &head)
		switch {
		case head.Type == "item_reference":
			item, ok := find.item(head.ID)
			if !ok && deferMissing {
				req.unresolved = true
				return nil
			}
			if !ok {
				return providerError(http.StatusNotFound, "not_found",
					openai.ProviderError("Item with id '"+head.ID+"' not found.", "input", ""), "input[%d]: item %q not found", i, head.ID)
			}
			out, changed = append(out, item), true
		case head.Type == "compaction" && strings.HasPrefix(head.EncryptedContent, compactionMark):
			changed = true
			if r, ok := st.answers.Get(head.ID); ok {
				req.after, out = &r, out[:0] // what came before is the compaction's view of r
				continue
			}
			// Not known here (a server restarted since): the items
			// before it, the managed view, stand for the conversation.
			c.h.log.Warn("a compaction item ctxhost no longer knows: its managed view stands for the conversation", "item", head.ID)
			c.h.metrics.droppedPart(c.u.Name, "compaction")
		default:
			out = append(out, it)
		}
	}
	if !changed {
		return nil
	}
	raw, err := json.Marshal(out)
	if err != nil {
		return fmt.Errorf("resolve input: %w", err)
	}
	req.raw, req.known = raw, jsonprefix.Prefix{}
	req.fields = req.fields.With("input", raw)
	return nil
}

// continuing returns the history messages a call continues (req.after):
// the session's messages up to the recorded place, without their ids.
func continuing(es *engine.Session, req *request) ([]sdk.Message, error) {
	r := req.after
	held := es.Messages()
	if r.held > len(held) || r.held > 0 && (held[r.held-1].ID != r.last || r.digest != "" && es.HistoryDigest(r.held) != r.digest) {
		if req.previous == "" { // a compaction's
			return nil, failf(http.StatusBadRequest, "not_found", "the conversation a compaction item stands for was replaced since; send the conversation again")
		}
		return nil, previousNotFound(req.previous) // the history was replaced since
	}
	out := slices.Clone(agentView(held[:r.held]))
	for i := range out {
		out[i].ID = ""
	}
	return out, nil
}

// reconcileAfter reconciles a call that continues a recorded conversation
// (see resolveResponses): the recorded messages, then the caller's.
func (c *call) reconcileAfter(ctx context.Context, es *engine.Session) (bool, error) {
	before, err := continuing(es, c.req)
	if err != nil {
		return false, err
	}
	if err := decode(c.d, c.req); err != nil {
		return false, failf(http.StatusBadRequest, "bad_request", "%v", err)
	}
	c.req.messages = append(before, c.req.messages...)
	replaced, err := reconcile(es, c.req, c.edited(ctx))
	if err != nil {
		if isBranching(err) {
			return false, err
		}
		return replaced, failf(http.StatusBadRequest, "bad_request", "%v", err)
	}
	c.held = es.MessageCount()
	return replaced, nil
}

// recordResponse remembers a Responses answer just added to the history
// as message added, unless the caller asked for it not to be stored.
func (c *call) recordResponse(es *engine.Session, a *responses.Answer, added sdk.Message) {
	if !c.req.store {
		return
	}
	if id := a.ID(); id != "" {
		c.h.responses.answers.Put(id, recorded{session: c.session, held: c.held + 1, last: added.ID, digest: es.HistoryDigest(c.held + 1)})
	}
	for _, it := range a.Output() {
		if id := responses.ItemID(it); id != "" {
			c.h.responses.items.Put(id, append(json.RawMessage(nil), it...))
		}
	}
}

// newID is a random id with prefix.
func newID(prefix string) string {
	b := make([]byte, 12)
	_, _ = rand.Read(b)
	return prefix + hex.EncodeToString(b)
}

// compactEndpoint answers POST /v1/responses/compact with the managed
// context: the conversation (input, previous_response_id) is reconciled
// with its session and saved, its context prepared as a call's would be,
// and the answer is OpenAI's compacted response: the context's items as
// they would go upstream, then a compaction item. Nothing goes upstream.
// A later call whose input is that output (and what follows) continues
// the whole conversation the session holds, not the compacted view: the
// compaction item names it.
func (h *Handler) compactEndpoint(u *upstream) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		c := &call{h: h, u: u, d: responsesDialect{}, w: w, r: r, start: start}
		outcome := c.finish(c.compact())
		c.release()
		h.metrics.called(u.Name, "responses.compact")
		h.log.Info("call", "upstream", u.Name, "endpoint", "responses.compact", "session", c.session, "outcome", outcome,
			"status", c.status, "duration", time.Since(start).Round(time.Microsecond).String())
	})
}

// compact runs a compaction call (see compactEndpoint).
func (c *call) compact() error {
	if err := c.read(); err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(c.r.Context(), c.u.Timeout)
	defer cancel()
	return c.h.sessions.WithSession(ctx, c.session, c.u.Profile, func(es *engine.Session) error {
		turn, es, err := c.prepare(ctx, es)
		if err != nil {
			return err
		}
		built, err := c.upstreamBody(es, turn)
		if err != nil {
			return errors.Join(err, ErrUnsaved)
		}
		o, err := jsonprefix.ParseObject(built.bytes())
		if err != nil {
			return errors.Join(fmt.Errorf("read the built request: %w", err), ErrUnsaved)
		}
		var items []map[string]any
		if err := json.Unmarshal(o.Get("input"), &items); err != nil {
			return errors.Join(fmt.Errorf("read the built input: %w", err), ErrUnsaved)
		}
		if err := es.Batch(func() error { return nil }); err != nil { // the conversation, saved
			return errors.Join(failf(http.StatusInternalServerError, "record", "save the conversation: %v", err), ErrUnsaved)
		}
		last := ""
		if held := es.Messages(); c.held > 0 && c.held <= len(held) {
			last = held[c.held-1].ID
		}
		id := newID("cmp_")
		c.h.responses.answers.Put(id, recorded{session: c.session, held: c.held, last: last, digest: es.HistoryDigest(c.held)})
		for _, it := range items {
			if it["type"] == nil {
				it["type"] = "message"
			}
		}
		output := append(make([]any, 0, len(items)+1), anySlice(items)...)
		output = append(output, map[string]any{"type": "compaction", "id": id, "encrypted_content": compactionMark + id})
		p := turn.Prepared
		callerTokens := p.Before.Used
		if p.Cache != nil {
			callerTokens = p.Cache.Unmanaged.Total
		}
		b, err := json.Marshal(map[string]any{"id": id, "object": "response.compaction", "output": output, "created_at": time.Now().Unix(),
			"usage": map[string]any{"input_tokens": callerTokens, "input_tokens_details": map[string]any{"cached_tokens": 0},
				"output_tokens": p.Budget.Used, "output_tokens_details": map[string]any{"reasoning_tokens": 0},
				"total_tokens": callerTokens + p.Budget.Used}})
		if err != nil {
			return fmt.Errorf("encode the compacted response: %w", err)
		}
		c.status, c.wrote = http.StatusOK, true
		writeBody(c.w, http.StatusOK, b)
		return nil
	})
}

func anySlice[T any](xs []T) []any {
	out := make([]any, len(xs))
	for i, x := range xs {
		out[i] = x
	}
	return out
}
