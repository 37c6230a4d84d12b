package engine

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"io"

	"github.com/ctxhost/ctxhost/transcript"
)

// TranscriptPosition is where a stored session is in its transcript: how
// many events were applied and a hash chained over them (each event
// without its line number), so a resumed run can tell the same transcript
// (skip what was applied) from a continuation of it (apply everything).
type TranscriptPosition struct {
	Events int
	Chain  string
}

// next is the position after ev.
func (p TranscriptPosition) next(ev transcript.Event) TranscriptPosition {
	return TranscriptPosition{Events: p.Events + 1, Chain: chained(p.Chain, ev)}
}

// chained returns the chain after ev.
func chained(chain string, ev transcript.Event) string {
	ev.Line = 0
	b, _ := json.Marshal(ev) // events are plain data
	h := sha256.New()
	h.Write([]byte(chain))
	h.Write(b)
	return hex.EncodeToString(h.Sum(nil))
}

// resume reads from rd the events a session at p applied, when rd's
// transcript begins with exactly those (the same transcript, crashed or
// stopped anywhere, even between a tool call and its result): start is
// then p.Events, with the prepare events among them and the last one's
// line, and rd is at the next event. Otherwise start is 0 and the caller
// applies the transcript from its start (it continues the stored one).
func resume(p TranscriptPosition, rd EventReader) (start, prepares, lastLine int, err error) {
	if p.Events == 0 {
		return 0, 0, 0, nil
	}
	chain := ""
	for n := 0; n < p.Events; n++ {
		ev, err := rd.Next()
		if errors.Is(err, io.EOF) {
			return 0, 0, 0, nil // shorter than what was applied
		}
		if err != nil {
			return 0, 0, 0, err
		}
		chain = chained(chain, ev)
		if ev.Type == transcript.EventPrepare {
			prepares++
		}
		lastLine = ev.Line
	}
	if chain != p.Chain {
		return 0, 0, 0, nil
	}
	return p.Events, prepares, lastLine, nil
}
