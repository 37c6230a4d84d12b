package engine

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"

	"github.com/ctxhost/ctxhost/host"
	"github.com/ctxhost/ctxhost/transcript"
)

// position is where a stored session is in its transcript: how many
// events were applied and a hash chained over them (each event without
// its line number), so a resumed run can tell the same transcript (skip
// what was applied) from a continuation of it (apply everything).
type position struct {
	Events int    `json:"events"`
	Chain  string `json:"chain"`
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

// storedPosition reads the session's position (zero when it has none).
func storedPosition(s *host.Session) (position, error) {
	var p position
	raw := s.Position()
	if len(raw) == 0 {
		return p, nil
	}
	if err := json.Unmarshal(raw, &p); err != nil || p.Events < 0 {
		return p, fmt.Errorf("stored transcript position %s: not a position", raw)
	}
	return p, nil
}

// resumeAt returns where to start applying t's events for a session at p:
// after the p.Events events applied when t begins with exactly those
// events (the same transcript, crashed or stopped anywhere, even between
// a tool call and its result), else at the start (t continues the stored
// one). The position continues from the returned one.
func resumeAt(p position, t *transcript.Transcript) (start int, from position) {
	if p.Events == 0 || len(t.Events) < p.Events {
		return 0, p
	}
	chain := ""
	for _, ev := range t.Events[:p.Events] {
		chain = chained(chain, ev)
	}
	if chain != p.Chain {
		return 0, p
	}
	return p.Events, p
}
