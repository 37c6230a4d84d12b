package callpath

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"time"

	"github.com/ctxhost/ctxhost/engine"
)

// heldStream is a streamed answer read while ctxhost's tools are offered:
// its events are held until its first tool call starts, its text passes
// heldText with no tool call started, or it ends (see selftools.go), then
// relayed, ctxhost's calls taken out, or answered.
type heldStream struct {
	c      *call
	res    *http.Response
	own    *ownTools
	filter ownFilter
	held   [][]byte // the raw events held, in order
	// relaying: the events go to the caller as they come; first: a tool
	// call started.
	relaying, first bool
	// asIs: the events go as they came, ctxhost's calls kept (atLimit).
	asIs bool
	// text counts the bytes of text held before any tool call started.
	text int
}

// heldText is how much of an answer's text is held while no tool call
// has started in it: an answer that calls ctxhost's tools mostly says a
// line first ("Let me note that."), and is held whole so that ctxhost can
// answer them and call the model again; a longer text is an answer to
// the caller, relayed as it comes from then on. A call of ctxhost's tools
// after that is answered and recorded (the model reads its result on the
// next call) and taken out of what the caller gets.
const heldText = 1024

// relayStreamOwn reads a streamed answer as relayStream does, its events
// held until its first tool call; again: ctxhost answered its tools, the
// model is to be called again, and nothing went to the caller.
func (c *call) relayStreamOwn(ctx context.Context, res *http.Response, a answer, es *engine.Session, own *ownTools) (again bool, err error) {
	hs := &heldStream{c: c, res: res, own: own, filter: newOwnFilter(c.d, own.isOwn)}
	in, err := c.admitAnswer(res.Body, -1)
	if err != nil {
		return false, err
	}
	br := getEventReader(in)
	defer putEventReader(br)
	limit := c.u.maxEvent()
	var ev, long, data []byte
	var name string
	for {
		line, rerr := readLine(br, &long, limit-len(ev))
		if len(line) > 0 {
			ev = append(ev, line...)
			if len(ev) > limit {
				return false, hs.abort(failf(http.StatusBadGateway, "answer_too_large",
					"upstream %q sent a stream event over %d bytes (the upstream's max_answer_bytes)", c.u.Name, limit))
			}
			field := bytes.TrimRight(line, "\r\n")
			switch {
			case len(field) == 0:
				done, again, err := hs.dispatch(a, es, name, data, ev)
				if err != nil || done {
					return again, err
				}
				ev, name, data = ev[:0], "", data[:0]
			case bytes.HasPrefix(field, []byte("data:")):
				if len(data) > 0 {
					data = append(data, '\n')
				}
				data = append(data, trimSpace1(field[5:])...)
			case bytes.HasPrefix(field, []byte("event:")):
				name = string(trimSpace1(field[6:]))
			}
		}
		if rerr != nil {
			if len(bytes.TrimSpace(ev)) > 0 && rerr == io.EOF {
				done, again, err := hs.dispatch(a, es, name, append(ev[:0:0], data...), append([]byte(nil), ev...))
				if err != nil || done {
					return again, err
				}
			}
			hs.start()
			return false, c.dropped(ctx, rerr)
		}
	}
}

// dispatch reads one event: held, relayed, or (the last) the answer
// decided. done: the stream is over; again: ctxhost answered its tools.
func (hs *heldStream) dispatch(a answer, es *engine.Session, name string, data, raw []byte) (done, again bool, err error) {
	c := hs.c
	if len(data) == 0 && name == "" { // a comment or keep-alive: relayed only once relaying
		if hs.relaying {
			return false, false, c.flush(raw)
		}
		return false, false, nil
	}
	last, err := a.Event(name, data)
	if errors.Is(err, errUpstreamFailed) {
		hs.start()
		_ = hs.flushHeld()
		_ = c.flush(raw)
		return true, false, &callError{status: http.StatusBadGateway, reason: "upstream_stream_error", err: err}
	}
	if err != nil {
		return true, false, hs.abort(failf(http.StatusBadGateway, "bad_answer", "upstream event unreadable: %v", err))
	}
	if calls := hs.filter.starts(name, data); len(calls) > 0 && !hs.first {
		hs.first = true
		if !hs.own.isOwn(calls[0]) { // the caller's call first: relayed from here on
			hs.start()
			if err := hs.flushHeld(); err != nil {
				return true, false, err
			}
		}
	}
	if !hs.relaying && !hs.first {
		if hs.text += textBytes(c.d, name, data); hs.text > heldText {
			hs.start()
			if err := hs.flushHeld(); err != nil {
				return true, false, err
			}
		}
	}
	if !last {
		if hs.relaying {
			return false, false, hs.relay(name, data, raw)
		}
		hs.held = append(hs.held, append([]byte(nil), raw...))
		return false, false, nil
	}
	m, ok, u := a.Result()
	v := hs.own.decide(m, ok)
	if v == ownRound && !hs.relaying {
		if err := c.recordOwnRound(es, m, u); err != nil {
			return true, false, err
		}
		return true, true, nil
	}
	if v == ownRound || v == atLimit && hs.relaying { // relayed already (the caller's call or a long text came first)
		hs.own.verdict = mixedCalls
		v = mixedCalls
	}
	hs.asIs = v == atLimit // held whole: its calls go to the caller as they came
	if err := c.record(es, a); err != nil {
		hs.start()
		_ = hs.flushHeld()
		return true, false, c.abort(err)
	}
	hs.start()
	if err := hs.flushHeld(); err != nil {
		return true, false, err
	}
	// The last event goes out once the session is released (deliver).
	if hs.asIs {
		c.rest = append([]byte(nil), raw...)
		return true, false, nil
	}
	out, err := hs.filter.event(name, data, raw)
	if err != nil {
		return true, false, hs.abort(failf(http.StatusBadGateway, "bad_answer", "upstream event unreadable: %v", err))
	}
	c.rest = append([]byte(nil), out...)
	return true, false, nil
}

// textBytes is how many bytes of the answer's text (not thinking) event
// (name, data) of dialect d carries.
func textBytes(d dialect, name string, data []byte) int {
	switch d.(type) {
	case anthropicDialect:
		if !bytes.Contains(data, []byte(`"text_delta"`)) {
			return 0
		}
		var ev struct {
			Delta struct {
				Type string `json:"type"`
				Text string `json:"text"`
			} `json:"delta"`
		}
		if json.Unmarshal(data, &ev) != nil || ev.Delta.Type != "text_delta" {
			return 0
		}
		return len(ev.Delta.Text)
	case chatDialect:
		if !bytes.Contains(data, []byte(`"content"`)) {
			return 0
		}
		var chunk struct {
			Choices []struct {
				Delta struct {
					Content string `json:"content"`
				} `json:"delta"`
			} `json:"choices"`
		}
		if json.Unmarshal(data, &chunk) != nil || len(chunk.Choices) == 0 {
			return 0
		}
		return len(chunk.Choices[0].Delta.Content)
	case responsesDialect:
		if !bytes.Contains(data, []byte(`"response.output_text.delta"`)) {
			return 0
		}
		var ev struct {
			Type  string `json:"type"`
			Delta string `json:"delta"`
		}
		if json.Unmarshal(data, &ev) != nil || ev.Type != "response.output_text.delta" {
			return 0
		}
		return len(ev.Delta)
	default:
		if !bytes.Contains(data, []byte(`"text"`)) {
			return 0
		}
		var chunk struct {
			Candidates []struct {
				Content struct {
					Parts []struct {
						Text    string `json:"text"`
						Thought bool   `json:"thought"`
					} `json:"parts"`
				} `json:"content"`
			} `json:"candidates"`
		}
		if json.Unmarshal(data, &chunk) != nil || len(chunk.Candidates) == 0 {
			return 0
		}
		n := 0
		for _, p := range chunk.Candidates[0].Content.Parts {
			if !p.Thought {
				n += len(p.Text)
			}
		}
		return n
	}
}

// start sends the status line and headers once: the upstream's, with
// ToolRoundsHeader.
func (hs *heldStream) start() {
	c := hs.c
	if hs.relaying {
		return
	}
	hs.relaying = true
	copyResponseHeaders(c.w.Header(), hs.res.Header)
	hs.own.header(c.w.Header())
	c.status = http.StatusOK
	c.wrote = true
	c.w.WriteHeader(http.StatusOK)
	c.out = &streamOut{w: c.w}
	c.progress, _ = c.h.sessions.(Progress)
	c.out.headers = time.AfterFunc(headerWait, c.out.flushHeaders) // stopped by serve (out.close)
}

// flushHeld relays the events held.
func (hs *heldStream) flushHeld() error {
	held := hs.held
	hs.held = nil
	for _, raw := range held {
		name, data := splitEvent(raw)
		if err := hs.relay(name, data, raw); err != nil {
			return err
		}
	}
	return nil
}

// relay writes one event to the caller, without ctxhost's calls.
func (hs *heldStream) relay(name string, data, raw []byte) error {
	if hs.asIs {
		return hs.c.flush(raw)
	}
	out, err := hs.filter.event(name, data, raw)
	if err != nil {
		return hs.abort(failf(http.StatusBadGateway, "bad_answer", "upstream event unreadable: %v", err))
	}
	if out == nil {
		return nil
	}
	return hs.c.flush(out)
}

// abort ends the stream with the provider's error event (the status
// line sent first when it has not gone out).
func (hs *heldStream) abort(err error) error {
	hs.start()
	return hs.c.abort(err)
}

// splitEvent reads a raw event's name and data back.
func splitEvent(raw []byte) (string, []byte) {
	var name string
	var data []byte
	for _, line := range bytes.Split(raw, []byte("\n")) {
		field := bytes.TrimRight(line, "\r")
		switch {
		case bytes.HasPrefix(field, []byte("data:")):
			if len(data) > 0 {
				data = append(data, '\n')
			}
			data = append(data, trimSpace1(field[5:])...)
		case bytes.HasPrefix(field, []byte("event:")):
			name = string(trimSpace1(field[6:]))
		}
	}
	return name, data
}
