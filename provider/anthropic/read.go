package anthropic

import (
	"github.com/ctxhost/ctxhost/provider"
)

// event is the part of a Messages stream event an answer reads, as
// json.Unmarshal reads it; readEvent reads it in one pass
// (provider.JSONReader), or declines, leaving it to json.Unmarshal.
type event struct {
	Type    string `json:"type"`
	Index   int    `json:"index"`
	Message struct {
		Usage *usage `json:"usage"`
	} `json:"message"`
	ContentBlock *RequestBlock `json:"content_block"`
	Delta        eventDelta    `json:"delta"`
	Usage        *usage        `json:"usage"`
}

type eventDelta struct {
	Type        string `json:"type"`
	Text        string `json:"text"`
	PartialJSON string `json:"partial_json"`
	Thinking    string `json:"thinking"`
	Signature   string `json:"signature"`
}

// readEvent reads one event into ev; false: leave it to json.Unmarshal.
func readEvent(data []byte, ev *event) bool {
	r := provider.NewJSONReader(data)
	var seen uint64
	r.Object(func(key []byte) {
		switch {
		case provider.Key(key, "type") && r.Once(&seen, 0):
			ev.Type = r.String()
		case provider.Key(key, "index") && r.Once(&seen, 1):
			ev.Index = r.Int()
		case provider.Key(key, "message") && r.Once(&seen, 2):
			var seen uint64
			r.Object(func(key []byte) {
				if provider.Key(key, "usage") && r.Once(&seen, 0) {
					ev.Message.Usage = readUsage(&r)
					return
				}
				r.Skip()
			})
		case provider.Key(key, "content_block") && r.Once(&seen, 3):
			if !r.Null() {
				ev.ContentBlock = &RequestBlock{}
				readBlock(&r, ev.ContentBlock)
			}
		case provider.Key(key, "delta") && r.Once(&seen, 4):
			var seen uint64
			d := &ev.Delta
			r.Object(func(key []byte) {
				switch {
				case provider.Key(key, "type") && r.Once(&seen, 0):
					d.Type = r.String()
				case provider.Key(key, "text") && r.Once(&seen, 1):
					d.Text = r.String()
				case provider.Key(key, "partial_json") && r.Once(&seen, 2):
					d.PartialJSON = r.String()
				case provider.Key(key, "thinking") && r.Once(&seen, 3):
					d.Thinking = r.String()
				case provider.Key(key, "signature") && r.Once(&seen, 4):
					d.Signature = r.String()
				default:
					r.Skip()
				}
			})
		case provider.Key(key, "usage") && r.Once(&seen, 5):
			ev.Usage = readUsage(&r)
		default:
			r.Skip()
		}
	})
	return r.Done()
}

// readUsage reads a usage member: nil for null.
func readUsage(r *provider.JSONReader) *usage {
	if r.Null() {
		return nil
	}
	u := &usage{}
	var seen uint64
	field := func() *int {
		n, null := r.IntOrNull()
		if null || r.Failed() {
			return nil
		}
		return &n
	}
	r.Object(func(key []byte) {
		switch {
		case provider.Key(key, "input_tokens") && r.Once(&seen, 0):
			u.InputTokens = field()
		case provider.Key(key, "output_tokens") && r.Once(&seen, 1):
			u.OutputTokens = field()
		case provider.Key(key, "cache_creation_input_tokens") && r.Once(&seen, 2):
			u.CacheCreationInputTokens = field()
		case provider.Key(key, "cache_read_input_tokens") && r.Once(&seen, 3):
			u.CacheReadInputTokens = field()
		default:
			r.Skip()
		}
	})
	return u
}

// wholeBody is the part of a message an answer reads.
type wholeBody struct {
	Content []RequestBlock `json:"content"`
	Usage   *usage         `json:"usage"`
}

// readWhole reads a message body into w in one pass; false: leave it to
// json.Unmarshal.
func readWhole(body []byte, w *wholeBody) bool {
	r := provider.NewJSONReader(body)
	var seen uint64
	r.Object(func(key []byte) {
		switch {
		case provider.Key(key, "content") && r.Once(&seen, 0):
			w.Content = []RequestBlock{}
			if !r.Array(func() {
				w.Content = append(w.Content, RequestBlock{})
				readBlock(&r, &w.Content[len(w.Content)-1])
			}) {
				w.Content = nil
			}
		case provider.Key(key, "usage") && r.Once(&seen, 1):
			w.Usage = readUsage(&r)
		default:
			r.Skip()
		}
	})
	return r.Done()
}

// readBlock reads a content block of a type ctxhost reads, without
// citations, as RequestBlock.UnmarshalJSON reads it; any other block (one
// kept whole as opaque) fails the reader, to be read by json.Unmarshal.
func readBlock(r *provider.JSONReader, b *RequestBlock) {
	if r.Null() {
		return
	}
	var seen uint64
	r.Object(func(key []byte) {
		switch {
		case provider.Key(key, "type") && r.Once(&seen, 0):
			b.Type = r.String()
		case provider.Key(key, "text") && r.Once(&seen, 1):
			b.Text = r.String()
		case provider.Key(key, "id") && r.Once(&seen, 2):
			b.ID = r.String()
		case provider.Key(key, "name") && r.Once(&seen, 3):
			b.Name = r.String()
		case provider.Key(key, "input") && r.Once(&seen, 4):
			b.Input = r.Raw()
		case provider.Key(key, "tool_use_id") && r.Once(&seen, 5):
			b.ToolUseID = r.String()
		case provider.Key(key, "content") && r.Once(&seen, 6):
			b.Content = r.Raw()
		case provider.Key(key, "is_error") && r.Once(&seen, 7):
			b.IsError = r.Bool()
		case provider.Key(key, "thinking") && r.Once(&seen, 8):
			b.Thinking = r.String()
		case provider.Key(key, "signature") && r.Once(&seen, 9):
			b.Signature = r.String()
		case provider.Key(key, "data") && r.Once(&seen, 10):
			b.Data = r.String()
		case provider.Key(key, "title") && r.Once(&seen, 11):
			b.Title = r.String()
		case provider.Key(key, "source") && r.Once(&seen, 12):
			if r.Null() {
				return
			}
			b.Source = &struct {
				Type      string `json:"type"`
				MediaType string `json:"media_type"`
				Data      string `json:"data"`
				URL       string `json:"url"`
			}{}
			var seen uint64
			r.Object(func(key []byte) {
				switch {
				case provider.Key(key, "type") && r.Once(&seen, 0):
					b.Source.Type = r.String()
				case provider.Key(key, "media_type") && r.Once(&seen, 1):
					b.Source.MediaType = r.String()
				case provider.Key(key, "data") && r.Once(&seen, 2):
					b.Source.Data = r.String()
				case provider.Key(key, "url") && r.Once(&seen, 3):
					b.Source.URL = r.String()
				default:
					r.Skip()
				}
			})
		case provider.Key(key, "citations"):
			r.Fail() // read by citations, the block perhaps opaque
		default:
			r.Skip()
		}
	})
	if !blockTypes[b.Type] && b.Type != "" {
		r.Fail() // kept whole as opaque
	}
}

// readMessages reads a request's messages into msgs in one pass; false:
// leave them to json.Unmarshal. Their contents are slices of raw.
func readMessages(raw []byte, msgs *[]RequestMessage) bool {
	r := provider.NewJSONReader(raw)
	*msgs = provider.ReadArray(&r, readMessage)
	return r.Done()
}

// readMessage reads one message of a request: its role, and its content
// as it came (a slice of the document).
func readMessage(r *provider.JSONReader, m *RequestMessage) {
	var seen uint64
	r.Object(func(key []byte) {
		switch {
		case provider.Key(key, "role") && r.Once(&seen, 0):
			m.Role = r.String()
		case provider.Key(key, "content") && r.Once(&seen, 1):
			m.Content = r.Skip()
		default:
			r.Skip()
		}
	})
}

// readBlocks reads a content's blocks in one pass, as readBlock reads
// each; false: leave them to json.Unmarshal.
func readBlocks(raw []byte, blocks *[]RequestBlock) bool {
	r := provider.NewJSONReader(raw)
	*blocks = provider.ReadArray(&r, readBlock)
	return r.Done()
}
