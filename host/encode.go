package host

import (
	"bytes"
	"encoding/json"
	"fmt"

	"github.com/ctxhost/ctxhost/host/history"
)

// encodeJSON is json.Marshal without HTML escaping: a stored text's <, >
// and & stay one byte each, where Marshal writes six (\u003c), so a
// session's events and snapshots cost about the length of what they hold
// (an answer of 20 MB of markup was 120 MB as Marshal writes it), and
// read back the same.
func encodeJSON(v any) ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(b.Bytes(), []byte("\n")), nil
}

// encodeState is encodeJSON of a session's state with its history's JSON
// (history.State's, valid and compact) written as it is: encoding/json
// scans a Marshaler's output again to compact it, which for a session
// holding a long answer was a second pass over every byte of the history
// (about half of encoding a snapshot). The history is the state object's
// last key; decoding does not depend on the order.
func encodeState(st sessionState) ([]byte, error) {
	hist := st.History.data
	if len(hist) == 0 {
		hist = []byte("null")
	}
	rest, err := encodeJSON(struct {
		sessionState
		History *historyState `json:"history,omitempty"` // shadows the state's: left out
	}{sessionState: st})
	if err != nil {
		return nil, err
	}
	if len(rest) < 2 || rest[len(rest)-1] != '}' {
		return nil, fmt.Errorf("encode session state: %.40q is not an object", rest)
	}
	out := make([]byte, 0, len(rest)+len(`,"history":`)+len(hist))
	out = append(out, rest[:len(rest)-1]...)
	if len(rest) > 2 {
		out = append(out, ',')
	}
	out = append(out, `"history":`...)
	out = append(out, hist...)
	return append(out, '}'), nil
}

// opsLeast is the least size ops take as an event: the texts, arguments
// and bytes their messages carry (their encoding only adds to it).
func opsLeast(ops []journalOp) int {
	n := 0
	for _, op := range ops {
		n += len(op.Text)
		if op.History != nil {
			n += messageLeast(op.History)
		}
		if op.Apply != nil {
			n += len(op.Apply.Args)
		}
	}
	return n
}

func messageLeast(op *history.Op) int {
	m := op.Message
	if m == nil {
		return 0
	}
	n := len(m.Content)
	for _, p := range m.Parts {
		n += len(p.Text) + len(p.Data) + len(p.Opaque)
	}
	for _, c := range m.ToolCalls {
		n += len(c.Arguments)
	}
	return n
}
