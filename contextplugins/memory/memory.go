package memory

import (
	"cmp"
	"encoding/json"
	"slices"
	"strings"

	"github.com/ctxhost/ctxhost/sdk"
)

// defaultImportance is the importance of an entry stored without one.
const defaultImportance = 0.5

// entry is one stored value. LastTurn and LastSeq are logical clocks (never
// wall time): the turn of the last use (advanced by Prepared after a use) and a counter
// bumped by every use.
type entry struct {
	Key         string          `json:"key"`
	Value       json.RawMessage `json:"value"`
	Description string          `json:"description,omitempty"`
	Importance  float64         `json:"importance"`
	LastTurn    uint64          `json:"last_turn"`
	LastSeq     uint64          `json:"last_seq"`
	Evicted     bool            `json:"evicted,omitempty"`

	// lineTokens caches the tokens of the entry's index line counted with
	// encoding countedWith (entries are replaced, never edited, on store).
	lineTokens  int
	countedWith string
}

// memorySession is one session's working memory.
type memorySession struct {
	maxEntries int
	entries    map[string]*entry
	turn       uint64 // turns prepared in which an entry was used
	seq        uint64 // uses so far
}

// touch records a use of e now.
func (s *memorySession) touch(e *entry) {
	s.seq++
	e.LastTurn, e.LastSeq = s.turn, s.seq
}

// evictionOrder compares two entries: the one to evict first sorts first.
// Least recently used turn first; within a turn, lowest importance first;
// then least recently used; then by key.
func evictionOrder(a, b *entry) int {
	return cmp.Or(
		cmp.Compare(a.LastTurn, b.LastTurn),
		cmp.Compare(a.Importance, b.Importance),
		cmp.Compare(a.LastSeq, b.LastSeq),
		strings.Compare(a.Key, b.Key),
	)
}

// sortedBy returns the entries that pass keep, sorted by cmpFn.
func (s *memorySession) sortedBy(keep func(*entry) bool, cmpFn func(a, b *entry) int) []*entry {
	out := make([]*entry, 0, len(s.entries))
	for _, e := range s.entries {
		if keep(e) {
			out = append(out, e)
		}
	}
	slices.SortFunc(out, cmpFn)
	return out
}

func byKey(a, b *entry) int { return strings.Compare(a.Key, b.Key) }

func all(*entry) bool { return true }

func visible(e *entry) bool { return !e.Evicted }

// evictedCount returns the number of entries evicted from the index.
func (s *memorySession) evictedCount() int {
	n := 0
	for _, e := range s.entries {
		if e.Evicted {
			n++
		}
	}
	return n
}

// validKey checks a key: non-empty, no surrounding spaces, no control
// characters (it is shown on one line of the index).
func validKey(key string) error {
	if key == "" || strings.TrimSpace(key) != key || strings.ContainsFunc(key, isControl) {
		return sdk.InvalidArgs("key %q must be non-empty, without surrounding spaces or control characters", key)
	}
	return nil
}

// validImportance checks that an importance lies in [0, 1].
func validImportance(v float64) error {
	if !(v >= 0 && v <= 1) {
		return sdk.InvalidArgs("importance must be between 0 and 1, got %v", v)
	}
	return nil
}

func isControl(r rune) bool { return r < 0x20 || r == 0x7f }
