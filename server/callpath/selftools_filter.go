package callpath

import (
	"bytes"
	"encoding/json"
	"errors"
)

// ownFilter takes ctxhost's calls out of a streamed answer, in one
// provider's event shapes: a call's name comes with the event that
// starts it in all four (a Chat Completions call's first delta, a
// Responses output_item.added, an Anthropic content_block_start, a Gemini
// functionCall part, which comes whole), so each event can be relayed as
// it comes. The calls that stay are numbered among themselves (indexes,
// output and content block indexes), as the caller's SDK expects.
type ownFilter interface {
	// starts reads event (name, data) as it arrives, and returns the
	// names of the tool calls it starts, in order.
	starts(name string, data []byte) []string
	// event is the event as the caller gets it: raw itself, rewritten
	// without ctxhost's calls, or nil (nothing of it is left).
	event(name string, data, raw []byte) ([]byte, error)
}

// newOwnFilter returns d's filter; isOwn tells ctxhost's tools.
func newOwnFilter(d dialect, isOwn func(string) bool) ownFilter {
	ix := indexes{own: map[int]bool{}}
	switch d.(type) {
	case chatDialect:
		return &chatFilter{indexes: ix, isOwn: isOwn, seen: map[int]bool{}}
	case responsesDialect:
		return &responsesFilter{indexes: ix, isOwn: isOwn}
	case anthropicDialect:
		return &anthropicFilter{indexes: ix, isOwn: isOwn}
	default:
		return &geminiFilter{isOwn: isOwn}
	}
}

// indexes are the places (call, output item or content block indexes)
// of ctxhost's calls in an answer.
type indexes struct{ own map[int]bool }

// shift is the place k takes once ctxhost's calls are out.
func (ix indexes) shift(k int) int {
	n := k
	for i := range ix.own {
		if i < k {
			n--
		}
	}
	return n
}

// withoutOwnCalls returns a whole answer body without ctxhost's calls.
func withoutOwnCalls(d dialect, body []byte, isOwn func(string) bool) ([]byte, error) {
	v, err := decodeAny(body)
	if err != nil {
		return nil, err
	}
	switch d.(type) {
	case chatDialect:
		for _, ch := range asList(v["choices"]) {
			if msg := asMap(asMap(ch)["message"]); msg != nil {
				filterList(msg, "tool_calls", func(tc map[string]any) bool { return isOwn(str(asMap(tc["function"])["name"])) })
			}
		}
	case responsesDialect:
		filterList(v, "output", func(it map[string]any) bool { return str(it["type"]) == "function_call" && isOwn(str(it["name"])) })
	case anthropicDialect:
		filterList(v, "content", func(b map[string]any) bool { return str(b["type"]) == "tool_use" && isOwn(str(b["name"])) })
	case geminiDialect:
		geminiWithout(v, isOwn)
	}
	return encodeAny(v)
}

// chatFilter: Chat Completions chunks, calls by their index in
// choices[0].delta.tool_calls.
type chatFilter struct {
	indexes
	isOwn func(string) bool
	seen  map[int]bool
	// theirs: a call of the caller's started.
	theirs bool
}

func (f *chatFilter) starts(_ string, data []byte) []string {
	if !bytes.Contains(data, []byte(`"tool_calls"`)) {
		return nil
	}
	var chunk struct {
		Choices []struct {
			Index int `json:"index"`
			Delta struct {
				ToolCalls []struct {
					Index    int `json:"index"`
					Function struct {
						Name string `json:"name"`
					} `json:"function"`
				} `json:"tool_calls"`
			} `json:"delta"`
		} `json:"choices"`
	}
	if json.Unmarshal(data, &chunk) != nil {
		return nil
	}
	var names []string
	for _, ch := range chunk.Choices {
		if ch.Index != 0 {
			continue
		}
		for _, tc := range ch.Delta.ToolCalls {
			if f.seen[tc.Index] || tc.Function.Name == "" {
				continue
			}
			f.seen[tc.Index] = true
			f.own[tc.Index] = f.isOwn(tc.Function.Name)
			if !f.own[tc.Index] {
				delete(f.own, tc.Index)
				f.theirs = true
			}
			names = append(names, tc.Function.Name)
		}
	}
	return names
}

func (f *chatFilter) event(name string, data, raw []byte) ([]byte, error) {
	if len(f.own) == 0 || !bytes.Contains(data, []byte(`"tool_calls"`)) {
		return raw, nil
	}
	v, err := decodeAny(data)
	if err != nil {
		return nil, err
	}
	for _, ch := range asList(v["choices"]) {
		delta := asMap(asMap(ch)["delta"])
		if delta == nil {
			continue
		}
		filterList(delta, "tool_calls", func(tc map[string]any) bool { return f.own[num(tc["index"])] })
		for _, tc := range asList(delta["tool_calls"]) {
			m := asMap(tc)
			m["index"] = f.shift(num(m["index"]))
		}
	}
	for _, ch := range asList(v["choices"]) {
		if c := asMap(ch); c != nil && str(c["finish_reason"]) == "tool_calls" && !f.theirs {
			c["finish_reason"] = "stop" // only ctxhost's calls were in it
		}
	}
	return sseOf(name, v)
}

// responsesFilter: Responses events, calls by their output_index.
type responsesFilter struct {
	indexes
	isOwn func(string) bool
}

func (f *responsesFilter) starts(_ string, data []byte) []string {
	if !bytes.Contains(data, []byte(`"response.output_item.added"`)) {
		return nil
	}
	var ev struct {
		Type        string `json:"type"`
		OutputIndex int    `json:"output_index"`
		Item        struct {
			Type string `json:"type"`
			Name string `json:"name"`
		} `json:"item"`
	}
	if json.Unmarshal(data, &ev) != nil || ev.Type != "response.output_item.added" || ev.Item.Type != "function_call" {
		return nil
	}
	if f.isOwn(ev.Item.Name) {
		f.own[ev.OutputIndex] = true
	}
	return []string{ev.Item.Name}
}

func (f *responsesFilter) event(name string, data, raw []byte) ([]byte, error) {
	if len(f.own) == 0 {
		return raw, nil
	}
	v, err := decodeAny(data)
	if err != nil {
		return nil, err
	}
	if k, ok := v["output_index"]; ok {
		if f.own[num(k)] {
			return nil, nil
		}
		v["output_index"] = f.shift(num(k))
	}
	if r := asMap(v["response"]); r != nil {
		filterList(r, "output", func(it map[string]any) bool { return str(it["type"]) == "function_call" && f.isOwn(str(it["name"])) })
	}
	return sseOf(name, v)
}

// anthropicFilter: Messages events, calls by their content block index.
type anthropicFilter struct {
	indexes
	isOwn func(string) bool
	// theirs: a call of the caller's started.
	theirs bool
}

func (f *anthropicFilter) starts(_ string, data []byte) []string {
	if !bytes.Contains(data, []byte(`"content_block_start"`)) {
		return nil
	}
	var ev struct {
		Type  string `json:"type"`
		Index int    `json:"index"`
		Block struct {
			Type string `json:"type"`
			Name string `json:"name"`
		} `json:"content_block"`
	}
	if json.Unmarshal(data, &ev) != nil || ev.Type != "content_block_start" || ev.Block.Type != "tool_use" {
		return nil
	}
	if f.isOwn(ev.Block.Name) {
		f.own[ev.Index] = true
	} else {
		f.theirs = true
	}
	return []string{ev.Block.Name}
}

func (f *anthropicFilter) event(name string, data, raw []byte) ([]byte, error) {
	if len(f.own) > 0 && !f.theirs && bytes.Contains(data, []byte(`"message_delta"`)) && bytes.Contains(data, []byte(`"tool_use"`)) {
		v, err := decodeAny(data)
		if err != nil {
			return nil, err
		}
		if d := asMap(v["delta"]); d != nil && str(d["stop_reason"]) == "tool_use" {
			d["stop_reason"] = "end_turn" // only ctxhost's calls were in it
			return sseOf(name, v)
		}
		return raw, nil
	}
	if len(f.own) == 0 || !bytes.Contains(data, []byte(`"content_block_`)) {
		return raw, nil
	}
	v, err := decodeAny(data)
	if err != nil {
		return nil, err
	}
	k, ok := v["index"]
	if !ok {
		return raw, nil
	}
	if f.own[num(k)] {
		return nil, nil
	}
	v["index"] = f.shift(num(k))
	return sseOf(name, v)
}

// geminiFilter: Gemini chunks, whose functionCall parts come whole.
type geminiFilter struct{ isOwn func(string) bool }

func (f *geminiFilter) starts(_ string, data []byte) []string {
	if !bytes.Contains(data, []byte(`"functionCall"`)) {
		return nil
	}
	var chunk struct {
		Candidates []struct {
			Content struct {
				Parts []struct {
					FunctionCall *struct {
						Name string `json:"name"`
					} `json:"functionCall"`
				} `json:"parts"`
			} `json:"content"`
		} `json:"candidates"`
	}
	if json.Unmarshal(data, &chunk) != nil || len(chunk.Candidates) == 0 {
		return nil
	}
	var names []string
	for _, p := range chunk.Candidates[0].Content.Parts {
		if p.FunctionCall != nil {
			names = append(names, p.FunctionCall.Name)
		}
	}
	return names
}

func (f *geminiFilter) event(name string, data, raw []byte) ([]byte, error) {
	if !bytes.Contains(data, []byte(`"functionCall"`)) {
		return raw, nil
	}
	v, err := decodeAny(data)
	if err != nil {
		return nil, err
	}
	if !geminiWithout(v, f.isOwn) {
		return raw, nil
	}
	if len(asList(v["candidates"])) == 0 && v["usageMetadata"] == nil {
		return nil, nil // nothing of the chunk is left
	}
	return sseOf(name, v)
}

// geminiWithout takes ctxhost's functionCall parts out of a
// GenerateContentResponse (a candidate left with no parts loses its
// content, one left with nothing at all goes); changed: it had some.
func geminiWithout(v map[string]any, isOwn func(string) bool) (changed bool) {
	cands := asList(v["candidates"])
	kept := cands[:0]
	for _, c := range cands {
		cand := asMap(c)
		content := asMap(cand["content"])
		if content != nil && filterList(content, "parts", func(p map[string]any) bool {
			fc := asMap(p["functionCall"])
			return fc != nil && isOwn(str(fc["name"]))
		}) {
			changed = true
			if len(asList(content["parts"])) == 0 {
				delete(cand, "content")
				if len(cand) == 0 || len(cand) == 1 && cand["index"] != nil {
					continue
				}
			}
		}
		kept = append(kept, c)
	}
	if changed {
		if len(kept) == 0 {
			delete(v, "candidates")
		} else {
			v["candidates"] = kept
		}
	}
	return changed
}

// filterList drops the elements of v[key] (a list of objects) that drop
// reports; changed: it dropped some.
func filterList(v map[string]any, key string, drop func(map[string]any) bool) (changed bool) {
	list, ok := v[key].([]any)
	if !ok {
		return false
	}
	kept := make([]any, 0, len(list))
	for _, el := range list {
		if m := asMap(el); m != nil && drop(m) {
			changed = true
			continue
		}
		kept = append(kept, el)
	}
	if changed {
		if len(kept) == 0 && key == "tool_calls" {
			delete(v, key)
		} else {
			v[key] = kept
		}
	}
	return changed
}

// decodeAny decodes a JSON object, numbers kept as they were written.
func decodeAny(b []byte) (map[string]any, error) {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	var v map[string]any
	if err := dec.Decode(&v); err != nil {
		return nil, err
	}
	if v == nil {
		return nil, errors.New("not a JSON object")
	}
	return v, nil
}

// encodeAny encodes v compactly, without escaping HTML characters.
func encodeAny(v any) ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(b.Bytes(), []byte("\n")), nil
}

// sseOf is the server-sent event of name (none: "") and data v.
func sseOf(name string, v any) ([]byte, error) {
	data, err := encodeAny(v)
	if err != nil {
		return nil, err
	}
	var b []byte
	if name != "" {
		b = append(append(append(b, "event: "...), name...), '\n')
	}
	return append(append(append(b, "data: "...), data...), "\n\n"...), nil
}

func asMap(v any) map[string]any { m, _ := v.(map[string]any); return m }

func asList(v any) []any { l, _ := v.([]any); return l }

func str(v any) string { s, _ := v.(string); return s }

// num is a JSON number's integer value (-1 when it is none).
func num(v any) int {
	switch n := v.(type) {
	case json.Number:
		if i, err := n.Int64(); err == nil {
			return int(i)
		}
	case int:
		return n
	}
	return -1
}
