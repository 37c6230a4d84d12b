package gemini

import (
	"github.com/ctxhost/ctxhost/provider"
)

// readResponse reads a GenerateContentResponse (or a stream's chunk)
// into res in one pass (provider.JSONReader), as json.Unmarshal reads
// it; false: leave it to json.Unmarshal.
func readResponse(data []byte, res *response) bool {
	r := provider.NewJSONReader(data)
	var seen uint64
	r.Object(func(key []byte) {
		switch {
		case provider.Key(key, "candidates") && r.Once(&seen, 0):
			res.Candidates = emptyOf(res.Candidates)
			if !r.Array(func() {
				res.Candidates = append(res.Candidates, zeroOf(res.Candidates))
				c := &res.Candidates[len(res.Candidates)-1]
				readCandidate(&r, &c.Content, &c.FinishReason)
			}) {
				res.Candidates = nil
			}
		case provider.Key(key, "usageMetadata") && r.Once(&seen, 1):
			if r.Null() {
				return
			}
			m := newOf(res.UsageMetadata)
			res.UsageMetadata = m
			var seen uint64
			r.Object(func(key []byte) {
				switch {
				case provider.Key(key, "promptTokenCount") && r.Once(&seen, 0):
					m.PromptTokenCount = r.Int()
				case provider.Key(key, "candidatesTokenCount") && r.Once(&seen, 1):
					m.CandidatesTokenCount = r.Int()
				case provider.Key(key, "cachedContentTokenCount") && r.Once(&seen, 2):
					m.CachedContentTokenCount = r.Int()
				case provider.Key(key, "thoughtsTokenCount") && r.Once(&seen, 3):
					m.ThoughtsTokenCount = r.Int()
				default:
					r.Skip()
				}
			})
		case provider.Key(key, "error") && r.Once(&seen, 2):
			res.Error = r.Skip()
		default:
			r.Skip()
		}
	})
	return r.Done()
}

// newOf, emptyOf and zeroOf make values of the unnamed struct types of
// fields: a new T, an empty slice of T, a zero T.
func newOf[T any](*T) *T         { return new(T) }
func emptyOf[T any]([]T) []T     { return []T{} }
func zeroOf[T any]([]T) (zero T) { return zero }

func readCandidate(r *provider.JSONReader, c *RequestContent, finish *string) {
	var seen uint64
	r.Object(func(key []byte) {
		switch {
		case provider.Key(key, "content") && r.Once(&seen, 0):
			readContent(r, c)
		case provider.Key(key, "finishReason") && r.Once(&seen, 1):
			*finish = r.String()
		default:
			r.Skip()
		}
	})
}

// readContent reads a content (a role and its parts).
func readContent(r *provider.JSONReader, c *RequestContent) {
	var seen uint64
	r.Object(func(key []byte) {
		switch {
		case provider.Key(key, "role") && r.Once(&seen, 0):
			c.Role = r.String()
		case provider.Key(key, "parts") && r.Once(&seen, 1):
			c.Parts = []RequestPart{}
			if !r.Array(func() {
				c.Parts = append(c.Parts, RequestPart{})
				readPart(r, &c.Parts[len(c.Parts)-1])
			}) {
				c.Parts = nil
			}
		default:
			r.Skip()
		}
	})
}

// readContents reads a request's contents in one pass; false: leave
// them to json.Unmarshal.
func readContents(raw []byte, contents *[]RequestContent) bool {
	r := provider.NewJSONReader(raw)
	*contents = provider.ReadArray(&r, readContent)
	return r.Done()
}

// readPart reads a part as RequestPart.UnmarshalJSON reads it; one kept
// whole as opaque (a field ctxhost does not read, nothing it reads)
// fails the reader, to be read by json.Unmarshal.
func readPart(r *provider.JSONReader, p *RequestPart) {
	if r.Null() {
		return
	}
	var seen uint64
	other := false // a key that is none of partFields as it is spelled
	r.Object(func(key []byte) {
		other = other || !partFields[string(key)]
		switch {
		case provider.Key(key, "text") && r.Once(&seen, 0):
			p.Text = r.String()
		case provider.Key(key, "thought") && r.Once(&seen, 1):
			p.Thought = r.Bool()
		case provider.Key(key, "thoughtSignature") && r.Once(&seen, 2):
			p.Signature = r.String()
		case provider.Key(key, "functionCall") && r.Once(&seen, 3):
			if r.Null() {
				return
			}
			fc := newOf(p.FunctionCall)
			p.FunctionCall = fc
			var seen uint64
			r.Object(func(key []byte) {
				switch {
				case provider.Key(key, "id") && r.Once(&seen, 0):
					fc.ID = r.String()
				case provider.Key(key, "name") && r.Once(&seen, 1):
					fc.Name = r.String()
				case provider.Key(key, "args") && r.Once(&seen, 2):
					fc.Args = r.Raw()
				default:
					r.Skip()
				}
			})
		case provider.Key(key, "functionResponse") && r.Once(&seen, 4):
			if r.Null() {
				return
			}
			fr := newOf(p.FunctionResponse)
			p.FunctionResponse = fr
			var seen uint64
			r.Object(func(key []byte) {
				switch {
				case provider.Key(key, "id") && r.Once(&seen, 0):
					fr.ID = r.String()
				case provider.Key(key, "name") && r.Once(&seen, 1):
					fr.Name = r.String()
				case provider.Key(key, "response") && r.Once(&seen, 2):
					fr.Response = r.Raw()
				default:
					r.Skip()
				}
			})
		case provider.Key(key, "inlineData") && r.Once(&seen, 5):
			if r.Null() {
				return
			}
			d := newOf(p.InlineData)
			p.InlineData = d
			readPair(r, "mimeType", &d.MimeType, "data", &d.Data)
		case provider.Key(key, "fileData") && r.Once(&seen, 6):
			if r.Null() {
				return
			}
			d := newOf(p.FileData)
			p.FileData = d
			readPair(r, "mimeType", &d.MimeType, "fileUri", &d.FileURI)
		default:
			r.Skip()
		}
	})
	if other && p.Text == "" && p.FunctionCall == nil && p.FunctionResponse == nil && p.InlineData == nil && p.FileData == nil {
		r.Fail() // kept whole as opaque
	}
}

// readPair reads an object of two string members.
func readPair(r *provider.JSONReader, k1 string, v1 *string, k2 string, v2 *string) {
	var seen uint64
	r.Object(func(key []byte) {
		switch {
		case provider.Key(key, k1) && r.Once(&seen, 0):
			*v1 = r.String()
		case provider.Key(key, k2) && r.Once(&seen, 1):
			*v2 = r.String()
		default:
			r.Skip()
		}
	})
}
