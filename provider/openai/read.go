package openai

import (
	"encoding/json"

	"github.com/ctxhost/ctxhost/provider"
)

// The answers' shapes, as json.Unmarshal reads them, and their readers
// in one pass (provider.JSONReader): a reader that fails leaves the
// document to json.Unmarshal, so that both read every document alike.

// wholeBody is the part of a chat.completion an answer reads.
type wholeBody struct {
	Choices []wholeChoice `json:"choices"`
	Usage   *chatUsage    `json:"usage"`
}

type wholeChoice struct {
	Message RequestMessage `json:"message"`
}

// chunk is the part of a chat.completion.chunk an answer reads.
type chunk struct {
	Choices []chunkChoice `json:"choices"`
	Usage   *chatUsage    `json:"usage"`
	// Error is the error member as it came (a slice of the chunk when
	// read in one pass).
	Error json.RawMessage `json:"error"`
}

type chunkChoice struct {
	Index int        `json:"index"`
	Delta chunkDelta `json:"delta"`
}

type chunkDelta struct {
	Content   *string         `json:"content"`
	Refusal   *string         `json:"refusal"`
	ToolCalls []toolCallDelta `json:"tool_calls"`
}

type toolCallDelta struct {
	Index    int    `json:"index"`
	ID       string `json:"id"`
	Function struct {
		Name      string `json:"name"`
		Arguments string `json:"arguments"`
	} `json:"function"`
}

// readWhole reads body into w in one pass; false: leave it to
// json.Unmarshal. The messages' raw members (content, audio,
// function_call) are slices of body.
func readWhole(body []byte, w *wholeBody) bool {
	r := provider.NewJSONReader(body)
	var seen uint64
	r.Object(func(key []byte) {
		switch {
		case provider.Key(key, "choices") && r.Once(&seen, 0):
			w.Choices = []wholeChoice{}
			if !r.Array(func() {
				w.Choices = append(w.Choices, wholeChoice{})
				ch := &w.Choices[len(w.Choices)-1]
				var seen uint64
				r.Object(func(key []byte) {
					if provider.Key(key, "message") && r.Once(&seen, 0) {
						readMessage(&r, &ch.Message)
						return
					}
					r.Skip()
				})
			}) {
				w.Choices = nil
			}
		case provider.Key(key, "usage") && r.Once(&seen, 1):
			w.Usage = readUsage(&r)
		default:
			r.Skip()
		}
	})
	return r.Done()
}

// readMessages reads a request's messages into msgs in one pass; false:
// leave them to json.Unmarshal. Raw members are slices of raw.
func readMessages(raw []byte, msgs *[]RequestMessage) bool {
	r := provider.NewJSONReader(raw)
	*msgs = provider.ReadArray(&r, readMessage)
	return r.Done()
}

// readMessage reads one message of a request or an answer into m (raw
// members are slices of the document).
func readMessage(r *provider.JSONReader, m *RequestMessage) {
	var seen uint64
	r.Object(func(key []byte) {
		switch {
		case provider.Key(key, "role") && r.Once(&seen, 0):
			m.Role = r.String()
		case provider.Key(key, "content") && r.Once(&seen, 1):
			m.Content = r.Skip()
		case provider.Key(key, "tool_calls") && r.Once(&seen, 2):
			m.ToolCalls = []RequestToolCall{}
			if !r.Array(func() {
				m.ToolCalls = append(m.ToolCalls, RequestToolCall{})
				readToolCall(r, &m.ToolCalls[len(m.ToolCalls)-1])
			}) {
				m.ToolCalls = nil
			}
		case provider.Key(key, "tool_call_id") && r.Once(&seen, 3):
			m.ToolCallID = r.String()
		case provider.Key(key, "refusal") && r.Once(&seen, 4):
			m.Refusal = r.String()
		case provider.Key(key, "name") && r.Once(&seen, 5):
			m.Name = r.String()
		case provider.Key(key, "audio") && r.Once(&seen, 6):
			m.Audio = r.Skip()
		case provider.Key(key, "function_call") && r.Once(&seen, 7):
			m.FunctionCall = r.Skip()
		default:
			r.Skip()
		}
	})
}

func readToolCall(r *provider.JSONReader, tc *RequestToolCall) {
	var seen uint64
	r.Object(func(key []byte) {
		switch {
		case provider.Key(key, "id") && r.Once(&seen, 0):
			tc.ID = r.String()
		case provider.Key(key, "type") && r.Once(&seen, 1):
			tc.Type = r.String()
		case provider.Key(key, "function") && r.Once(&seen, 2):
			readFunction(r, &tc.Function.Name, &tc.Function.Arguments)
		default:
			r.Skip()
		}
	})
}

func readFunction(r *provider.JSONReader, name, args *string) {
	var seen uint64
	r.Object(func(key []byte) {
		switch {
		case provider.Key(key, "name") && r.Once(&seen, 0):
			*name = r.String()
		case provider.Key(key, "arguments") && r.Once(&seen, 1):
			*args = r.String()
		default:
			r.Skip()
		}
	})
}

// readUsage reads a usage member: nil for null.
func readUsage(r *provider.JSONReader) *chatUsage {
	if r.Null() {
		return nil
	}
	u := &chatUsage{}
	var seen uint64
	r.Object(func(key []byte) {
		switch {
		case provider.Key(key, "prompt_tokens") && r.Once(&seen, 0):
			u.PromptTokens = r.Int()
		case provider.Key(key, "completion_tokens") && r.Once(&seen, 1):
			u.CompletionTokens = r.Int()
		case provider.Key(key, "prompt_tokens_details") && r.Once(&seen, 2):
			var seen uint64
			r.Object(func(key []byte) {
				if provider.Key(key, "cached_tokens") && r.Once(&seen, 0) {
					u.PromptTokensDetails.CachedTokens = r.Int()
					return
				}
				r.Skip()
			})
		default:
			r.Skip()
		}
	})
	return u
}

// readChunk reads one chunk into c in one pass; false: leave it to
// json.Unmarshal.
func readChunk(data []byte, c *chunk) bool {
	r := provider.NewJSONReader(data)
	var seen uint64
	r.Object(func(key []byte) {
		switch {
		case provider.Key(key, "choices") && r.Once(&seen, 0):
			c.Choices = []chunkChoice{}
			if !r.Array(func() {
				c.Choices = append(c.Choices, chunkChoice{})
				readChunkChoice(&r, &c.Choices[len(c.Choices)-1])
			}) {
				c.Choices = nil
			}
		case provider.Key(key, "usage") && r.Once(&seen, 1):
			c.Usage = readUsage(&r)
		case provider.Key(key, "error") && r.Once(&seen, 2):
			c.Error = r.Skip()
		default:
			r.Skip()
		}
	})
	return r.Done()
}

func readChunkChoice(r *provider.JSONReader, ch *chunkChoice) {
	var seen uint64
	r.Object(func(key []byte) {
		switch {
		case provider.Key(key, "index") && r.Once(&seen, 0):
			ch.Index = r.Int()
		case provider.Key(key, "delta") && r.Once(&seen, 1):
			var seen uint64
			d := &ch.Delta
			r.Object(func(key []byte) {
				switch {
				case provider.Key(key, "content") && r.Once(&seen, 0):
					d.Content = stringPtr(r)
				case provider.Key(key, "refusal") && r.Once(&seen, 1):
					d.Refusal = stringPtr(r)
				case provider.Key(key, "tool_calls") && r.Once(&seen, 2):
					d.ToolCalls = []toolCallDelta{}
					if !r.Array(func() {
						d.ToolCalls = append(d.ToolCalls, toolCallDelta{})
						tc := &d.ToolCalls[len(d.ToolCalls)-1]
						var seen uint64
						r.Object(func(key []byte) {
							switch {
							case provider.Key(key, "index") && r.Once(&seen, 0):
								tc.Index = r.Int()
							case provider.Key(key, "id") && r.Once(&seen, 1):
								tc.ID = r.String()
							case provider.Key(key, "function") && r.Once(&seen, 2):
								readFunction(r, &tc.Function.Name, &tc.Function.Arguments)
							default:
								r.Skip()
							}
						})
					}) {
						d.ToolCalls = nil
					}
				default:
					r.Skip()
				}
			})
		default:
			r.Skip()
		}
	})
}

// stringPtr reads a string member into a *string: nil for null.
func stringPtr(r *provider.JSONReader) *string {
	s, null := r.StringOrNull()
	if null || r.Failed() {
		return nil
	}
	return &s
}
