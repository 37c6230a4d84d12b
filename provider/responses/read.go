package responses

import (
	"encoding/json"

	"github.com/ctxhost/ctxhost/provider"
)

// The readers in one pass (provider.JSONReader) of a response, its
// stream's events, its items and their content parts: each reads a
// document as json.Unmarshal reads it into the same struct, or declines
// it (false), leaving it to json.Unmarshal. Raw members are slices of
// the document read.

// streamEvent is the part of a stream's event an answer reads.
type streamEvent struct {
	Type     string          `json:"type"`
	Response json.RawMessage `json:"response"`
}

func readEvent(data []byte, ev *streamEvent) bool {
	r := provider.NewJSONReader(data)
	var seen uint64
	r.Object(func(key []byte) {
		switch {
		case provider.Key(key, "type") && r.Once(&seen, 0):
			ev.Type = r.String()
		case provider.Key(key, "response") && r.Once(&seen, 1):
			ev.Response = r.Skip()
		default:
			r.Skip()
		}
	})
	return r.Done()
}

func readResponse(data []byte, res *response) bool {
	r := provider.NewJSONReader(data)
	var seen uint64
	r.Object(func(key []byte) {
		switch {
		case provider.Key(key, "id") && r.Once(&seen, 0):
			res.ID = r.String()
		case provider.Key(key, "output") && r.Once(&seen, 1):
			res.Output = rawArray(&r)
		case provider.Key(key, "usage") && r.Once(&seen, 2):
			if r.Null() {
				return
			}
			u := newOf(res.Usage)
			res.Usage = u
			var seen uint64
			r.Object(func(key []byte) {
				switch {
				case provider.Key(key, "input_tokens") && r.Once(&seen, 0):
					u.InputTokens = r.Int()
				case provider.Key(key, "output_tokens") && r.Once(&seen, 1):
					u.OutputTokens = r.Int()
				case provider.Key(key, "input_tokens_details") && r.Once(&seen, 2):
					var seen uint64
					r.Object(func(key []byte) {
						if provider.Key(key, "cached_tokens") && r.Once(&seen, 0) {
							u.InputTokensDetails.CachedTokens = r.Int()
							return
						}
						r.Skip()
					})
				default:
					r.Skip()
				}
			})
		default:
			r.Skip()
		}
	})
	return r.Done()
}

// newOf is a new T, for a pointer field of an unnamed struct type.
func newOf[T any](*T) *T { return new(T) }

// rawArray reads an array of any values as into a []json.RawMessage:
// nil for null.
func rawArray(r *provider.JSONReader) []json.RawMessage {
	out := []json.RawMessage{}
	if !r.Array(func() { out = append(out, r.Skip()) }) {
		return nil
	}
	return out
}

func readItem(data []byte, it *Item) bool {
	r := provider.NewJSONReader(data)
	var seen uint64
	r.Object(func(key []byte) {
		switch {
		case provider.Key(key, "type") && r.Once(&seen, 0):
			it.Type = r.String()
		case provider.Key(key, "role") && r.Once(&seen, 1):
			it.Role = r.String()
		case provider.Key(key, "content") && r.Once(&seen, 2):
			it.Content = r.Skip()
		case provider.Key(key, "call_id") && r.Once(&seen, 3):
			it.CallID = r.String()
		case provider.Key(key, "name") && r.Once(&seen, 4):
			it.Name = r.String()
		case provider.Key(key, "arguments") && r.Once(&seen, 5):
			it.Arguments = r.String()
		case provider.Key(key, "output") && r.Once(&seen, 6):
			it.Output = r.Skip()
		default:
			r.Skip()
		}
	})
	return r.Done()
}

func readParts(data []byte, parts *[]json.RawMessage) bool {
	r := provider.NewJSONReader(data)
	*parts = rawArray(&r)
	return r.Done()
}

func readPart(data []byte, p *part) bool {
	r := provider.NewJSONReader(data)
	var seen uint64
	r.Object(func(key []byte) {
		switch {
		case provider.Key(key, "type") && r.Once(&seen, 0):
			p.Type = r.String()
		case provider.Key(key, "text") && r.Once(&seen, 1):
			p.Text = r.String()
		case provider.Key(key, "refusal") && r.Once(&seen, 2):
			p.Refusal = r.String()
		case provider.Key(key, "image_url") && r.Once(&seen, 3):
			p.ImageURL = r.String()
		case provider.Key(key, "detail") && r.Once(&seen, 4):
			p.Detail = r.String()
		case provider.Key(key, "annotations") && r.Once(&seen, 5):
			p.Annotations = rawArray(&r)
		case provider.Key(key, "logprobs") && r.Once(&seen, 6):
			p.Logprobs = rawArray(&r)
		default:
			r.Skip()
		}
	})
	return r.Done()
}

// itemID reads an item's id (what json.Unmarshal reads into a struct of
// one string field id; ok false when it refuses the item).
func itemID(data []byte) (id string, ok bool) {
	r := provider.NewJSONReader(data)
	var seen uint64
	r.Object(func(key []byte) {
		if provider.Key(key, "id") && r.Once(&seen, 0) {
			id = r.String()
			return
		}
		r.Skip()
	})
	if r.Done() {
		return id, true
	}
	var head struct {
		ID string `json:"id"`
	}
	if json.Unmarshal(data, &head) != nil {
		return "", false
	}
	return head.ID, true
}

// ItemID is an output item's id ("" when it has none or is not an
// object json.Unmarshal reads).
func ItemID(item json.RawMessage) string {
	id, _ := itemID(item)
	return id
}
