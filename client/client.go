// Package client calls a running `ctxhost serve` from Go: the
// ContextService over Connect's protocol (HTTP/1.1 or HTTP/2, JSON-free
// binary protobuf) or over gRPC, with the bearer token on every call.
//
//	c := client.New("http://127.0.0.1:7400", client.Options{Token: os.Getenv("CTXHOST_TOKEN")})
//	info, err := c.CreateSession(ctx, "run-42", "")
//	seq, err := c.Append(ctx, "run-42", client.WriteOptions{}, sdk.Message{Role: "user", Content: "fix the bug"})
//	turn, err := c.Prepare(ctx, "run-42", "")
//	// or both in one call and one store write:
//	turn, err = c.Turn(ctx, "run-42", "", client.WriteOptions{}, toolResult)
//	// send turn.Payload to the model, then
//	err = c.ReportUsage(ctx, "run-42", promptTokens, completionTokens)
//
// Every write returns the session's new sequence number. WriteOptions
// carries an expected sequence (a stale one fails with
// connect.CodeAborted; CurrentSequence reads the session's number from
// such an error) and an idempotency key (a retried write is applied once).
// The generated client (Raw) offers every RPC with its full request.
package client

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"

	"connectrpc.com/connect"
	"google.golang.org/protobuf/types/known/structpb"

	"github.com/ctxhost/ctxhost/api/servicev1"
	"github.com/ctxhost/ctxhost/api/servicev1/servicev1connect"
	"github.com/ctxhost/ctxhost/sdk"
)

// SequenceHeader is the response header (and error metadata) that carries
// the session's current sequence number.
const SequenceHeader = "Ctxhost-Sequence"

// Options configure a Client.
type Options struct {
	// Token is the bearer token the server requires ("" when it requires
	// none).
	Token string
	// GRPC speaks gRPC instead of Connect's protocol (the server answers
	// both on one port); it needs an HTTP/2 client (h2c for http://).
	GRPC bool
	// HTTPClient is the transport (nil: http.DefaultClient).
	HTTPClient *http.Client
	// PayloadCache is how many payloads Prepare keeps, one per session
	// and agent, the most recently used (0: DefaultPayloadCache; < 0:
	// none). With the last payload held, Prepare names it and the
	// service leaves out of its answer an unchanged payload, or the part
	// of a new one that the held one already holds.
	PayloadCache int
}

// Client is a ContextService client.
type Client struct {
	// Raw is the generated client: every RPC with its full request.
	Raw      servicev1connect.ContextServiceClient
	payloads *payloadCache
}

// New returns a client of the service at baseURL (http://HOST:PORT or
// https://HOST:PORT).
func New(baseURL string, opts Options) *Client {
	hc := opts.HTTPClient
	if hc == nil {
		hc = http.DefaultClient
	}
	var copts []connect.ClientOption
	if opts.GRPC {
		copts = append(copts, connect.WithGRPC())
	}
	if opts.Token != "" {
		copts = append(copts, connect.WithInterceptors(bearer(opts.Token)))
	}
	c := &Client{Raw: servicev1connect.NewContextServiceClient(hc, strings.TrimSuffix(baseURL, "/"), copts...)}
	switch {
	case opts.PayloadCache == 0:
		c.payloads = newPayloadCache(DefaultPayloadCache)
	case opts.PayloadCache > 0:
		c.payloads = newPayloadCache(opts.PayloadCache)
	}
	return c
}

// bearer adds the token to every request.
func bearer(token string) connect.UnaryInterceptorFunc {
	return func(next connect.UnaryFunc) connect.UnaryFunc {
		return func(ctx context.Context, req connect.AnyRequest) (connect.AnyResponse, error) {
			req.Header().Set("Authorization", "Bearer "+token)
			return next(ctx, req)
		}
	}
}

// WriteOptions are the optional checks of a write.
type WriteOptions struct {
	// ExpectedSequence, when not 0, makes the write fail with
	// connect.CodeAborted unless the session is at that sequence.
	ExpectedSequence uint64
	// IdempotencyKey, when set, makes a retried write apply once.
	IdempotencyKey string
}

func (w WriteOptions) proto() *servicev1.WriteOptions {
	return &servicev1.WriteOptions{ExpectedSequence: w.ExpectedSequence, IdempotencyKey: w.IdempotencyKey}
}

// CreateSession creates session id with profile ("" for the
// configuration's first).
func (c *Client) CreateSession(ctx context.Context, id, profile string) (*servicev1.SessionInfo, error) {
	res, err := c.Raw.CreateSession(ctx, connect.NewRequest(&servicev1.CreateSessionRequest{SessionId: id, Profile: profile}))
	if err != nil {
		return nil, fmt.Errorf("create session %q: %w", id, err)
	}
	return res.Msg, nil
}

// DeleteSession deletes session id (and forgets the payloads this client
// holds for it); deleted is false when there was none.
func (c *Client) DeleteSession(ctx context.Context, id string) (deleted bool, err error) {
	c.payloads.forget(id)
	res, err := c.Raw.DeleteSession(ctx, connect.NewRequest(&servicev1.DeleteSessionRequest{SessionId: id}))
	if err != nil {
		return false, fmt.Errorf("delete session %q: %w", id, err)
	}
	return res.Msg.Deleted, nil
}

// Append adds messages to session id, in order; it returns the new
// sequence and the stored ids.
func (c *Client) Append(ctx context.Context, id string, w WriteOptions, msgs ...sdk.Message) (uint64, []string, error) {
	req := &servicev1.AppendMessagesRequest{SessionId: id, Write: w.proto()}
	for _, m := range msgs {
		req.Messages = append(req.Messages, toProto(m))
	}
	res, err := c.Raw.AppendMessages(ctx, connect.NewRequest(req))
	if err != nil {
		return 0, nil, fmt.Errorf("append to %q: %w", id, err)
	}
	return res.Msg.Sequence, res.Msg.Ids, nil
}

// SetInput sets the session's current input.
func (c *Client) SetInput(ctx context.Context, id, text string, w WriteOptions) (uint64, error) {
	return c.setText(ctx, id, servicev1.Text_TEXT_INPUT, "input", text, w)
}

// SetSystemPrompt sets the session's system prompt.
func (c *Client) SetSystemPrompt(ctx context.Context, id, text string, w WriteOptions) (uint64, error) {
	return c.setText(ctx, id, servicev1.Text_TEXT_SYSTEM_PROMPT, "system prompt", text, w)
}

// SetInstructions sets the session's instructions.
func (c *Client) SetInstructions(ctx context.Context, id, text string, w WriteOptions) (uint64, error) {
	return c.setText(ctx, id, servicev1.Text_TEXT_INSTRUCTIONS, "instructions", text, w)
}

func (c *Client) setText(ctx context.Context, id string, kind servicev1.Text, what, text string, w WriteOptions) (uint64, error) {
	res, err := c.Raw.SetText(ctx, connect.NewRequest(&servicev1.SetTextRequest{SessionId: id, Text: kind, Value: text, Write: w.proto()}))
	if err != nil {
		return 0, fmt.Errorf("set %s of %q: %w", what, id, err)
	}
	return res.Msg.Sequence, nil
}

// Apply runs op with args (any JSON value) on the session's plugin
// binding and returns the op's JSON result.
func (c *Client) Apply(ctx context.Context, id, plugin, op string, args any, w WriteOptions) (json.RawMessage, uint64, error) {
	b, err := json.Marshal(args)
	if err != nil {
		return nil, 0, fmt.Errorf("apply %s on %q: encode args: %w", op, plugin, err)
	}
	var v structpb.Value
	if err := v.UnmarshalJSON(b); err != nil {
		return nil, 0, fmt.Errorf("apply %s on %q: encode args: %w", op, plugin, err)
	}
	res, err := c.Raw.ApplyOp(ctx, connect.NewRequest(&servicev1.ApplyOpRequest{SessionId: id, Plugin: plugin, Op: op, Args: &v, Write: w.proto()}))
	if err != nil {
		return nil, 0, fmt.Errorf("apply %s on %q in %q: %w", op, plugin, id, err)
	}
	var out json.RawMessage
	if res.Msg.Result != nil {
		if out, err = res.Msg.Result.MarshalJSON(); err != nil {
			return nil, 0, fmt.Errorf("apply %s on %q: decode result: %w", op, plugin, err)
		}
	}
	return out, res.Msg.Sequence, nil
}

// ReportUsage reports the provider's token counts of the last call.
func (c *Client) ReportUsage(ctx context.Context, id string, prompt, completion int64) (uint64, error) {
	res, err := c.Raw.ReportUsage(ctx, connect.NewRequest(&servicev1.ReportUsageRequest{SessionId: id, PromptTokens: prompt, CompletionTokens: completion}))
	if err != nil {
		return 0, fmt.Errorf("report usage of %q: %w", id, err)
	}
	return res.Msg.Sequence, nil
}

// Prepare builds the context of the session's next turn (for agent, in a
// multi-agent profile; "" otherwise). The answer always carries the whole
// payload. With the last payload held for the session and agent, the
// service sends only what changed: nothing when it is unchanged
// (PayloadUnchanged tells), and when it starts with the held one's
// first bytes, only what follows them (PayloadPrefix tells how many);
// Prepare completes it from the held one, so a turn that appends to a
// long conversation carries only what it appended.
func (c *Client) Prepare(ctx context.Context, id, agent string) (*servicev1.PrepareResponse, error) {
	return c.prepare(ctx, &servicev1.PrepareRequest{SessionId: id, Agent: agent})
}

// Turn is an agent's turn in one call: msgs appended to session id, in
// order, then the context of its next turn prepared (for agent, in a
// multi-agent profile; "" otherwise), both saved in one store write, so
// the turn costs one round trip and one sync where Append then Prepare
// cost two of each. The answer is Prepare's, with the stored ids of msgs
// (MessageIds) and the session's new sequence; when a message is invalid
// or the turn fails, nothing of it is applied.
func (c *Client) Turn(ctx context.Context, id, agent string, w WriteOptions, msgs ...sdk.Message) (*servicev1.PrepareResponse, error) {
	req := &servicev1.PrepareRequest{SessionId: id, Agent: agent, Write: w.proto()}
	for _, m := range msgs {
		req.Messages = append(req.Messages, toProto(m))
	}
	return c.prepare(ctx, req)
}

// prepare sends msg, naming the payload held for its session and agent,
// and completes the answer's payload from the held one.
func (c *Client) prepare(ctx context.Context, msg *servicev1.PrepareRequest) (*servicev1.PrepareResponse, error) {
	id := msg.SessionId
	key := payloadKey{id, msg.Agent}
	held := c.payloads.get(key)
	if held != nil {
		msg.KnownPayloadTag, msg.AcceptPayloadSuffix = held.tag, true
	}
	res, err := c.Raw.Prepare(ctx, connect.NewRequest(msg))
	if err != nil {
		return nil, fmt.Errorf("prepare %q: %w", id, err)
	}
	out := res.Msg
	if out.PayloadUnchanged {
		if held == nil || out.PayloadTag != held.tag {
			return nil, fmt.Errorf("prepare %q: the service left out a payload this client does not hold (tag %q)", id, out.PayloadTag)
		}
		out.Payload, out.System = held.payload, held.system
		return out, nil
	}
	if n := out.PayloadPrefix; n > 0 {
		if held == nil || n > uint64(len(held.payload)) {
			c.payloads.forget(id)
			return nil, fmt.Errorf("prepare %q: the service sent the rest of a payload after %d bytes this client does not hold", id, n)
		}
		out.Payload = held.payload[:n] + out.Payload
	}
	c.payloads.put(&heldPayload{key: key, tag: out.PayloadTag, payload: out.Payload, system: out.System})
	return out, nil
}

// CurrentSequence reads the session's current sequence from an error the
// service returned (a stale expected sequence, connect.CodeAborted).
func CurrentSequence(err error) (uint64, bool) {
	var ce *connect.Error
	if !errors.As(err, &ce) {
		return 0, false
	}
	v := ce.Meta().Get(SequenceHeader)
	if v == "" {
		return 0, false
	}
	n, perr := strconv.ParseUint(v, 10, 64)
	return n, perr == nil
}

func toProto(m sdk.Message) *servicev1.Message {
	out := &servicev1.Message{Id: m.ID, Role: m.Role, Name: m.Name, SpeakerType: string(m.SpeakerType), Content: m.Content,
		ToolCallId: m.ToolCallID, ToolName: m.ToolName, Metadata: m.Metadata, Kind: m.Kind, Pinned: m.Pinned}
	for _, tc := range m.ToolCalls {
		out.ToolCalls = append(out.ToolCalls, &servicev1.ToolCall{Id: tc.ID, Name: tc.Name, Arguments: tc.Arguments, Signature: tc.Signature})
	}
	for _, p := range m.Parts {
		out.Parts = append(out.Parts, &servicev1.Part{Type: p.Type, Text: p.Text, MediaType: p.MediaType, Data: p.Data, Url: p.URL,
			Width: int32(p.Width), Height: int32(p.Height), Detail: p.Detail, Pages: int32(p.Pages), Title: p.Title,
			Signature: p.Signature, Opaque: p.Opaque, Provider: p.Provider})
	}
	return out
}

// jsonValue converts JSON text to a protobuf Value (nil for none).
func jsonValue(raw json.RawMessage) (*structpb.Value, error) {
	if len(raw) == 0 {
		return nil, nil
	}
	var v structpb.Value
	if err := v.UnmarshalJSON(raw); err != nil {
		return nil, err
	}
	return &v, nil
}

// SetTools replaces the session's tool definitions, tool choice and
// response schema (a zero r clears them).
func (c *Client) SetTools(ctx context.Context, id string, r sdk.RequestTools, w WriteOptions) (uint64, error) {
	req := &servicev1.SetToolsRequest{SessionId: id, Write: w.proto()}
	for _, t := range r.Tools {
		params, err := jsonValue(t.Parameters)
		if err != nil {
			return 0, fmt.Errorf("set tools of %q: tool %q: %w", id, t.Name, err)
		}
		req.Tools = append(req.Tools, &servicev1.ToolDefinition{Name: t.Name, Description: t.Description, Parameters: params})
	}
	if tc := r.ToolChoice; tc != nil {
		req.ToolChoice = &servicev1.ToolChoice{Mode: tc.Mode, Name: tc.Name}
	}
	if f := r.ResponseFormat; f != nil {
		schema, err := jsonValue(f.Schema)
		if err != nil {
			return 0, fmt.Errorf("set tools of %q: response format: %w", id, err)
		}
		req.ResponseFormat = &servicev1.ResponseFormat{Name: f.Name, Schema: schema, Strict: f.Strict}
	}
	res, err := c.Raw.SetTools(ctx, connect.NewRequest(req))
	if err != nil {
		return 0, fmt.Errorf("set tools of %q: %w", id, err)
	}
	return res.Msg.Sequence, nil
}

// History reads stored messages as given (the originals of masked, cut
// and omitted ones too): by ids when given, else those containing query
// (every message when empty).
func (c *Client) History(ctx context.Context, id string, ids []string, query string) ([]*servicev1.HistoryEntry, error) {
	res, err := c.Raw.GetHistory(ctx, connect.NewRequest(&servicev1.GetHistoryRequest{SessionId: id, Ids: ids, Query: query}))
	if err != nil {
		return nil, fmt.Errorf("history of %q: %w", id, err)
	}
	return res.Msg.Entries, nil
}
