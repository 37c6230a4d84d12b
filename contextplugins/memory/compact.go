package memory

import (
	"context"
	"fmt"
	"strings"

	"github.com/ctxhost/ctxhost/sdk"
)

// maxLoggedKeys bounds the keys named in a compaction log.
const maxLoggedKeys = 20

// approximateEncoding is the tokenizer that counts ceil(characters / 4):
// unlike the BPE encodings, its counts of the lines do not add up exactly
// to the count of the index.
const approximateEncoding = "approximate"

// Compact evicts entries from the index in eviction order (see
// evictionOrder) until at least TokensNeeded tokens are freed or nothing is
// left to evict. It is one pass: the entries are sorted once and each
// evicted line is counted once (and remembered for later calls); the freed
// tokens are the sum of the evicted lines minus the growth of the footer.
// Every index line ends with a newline and starts with a character no
// tokenizer piece joins to the previous line, so with the BPE encodings
// these sums are exact; with the approximate encoding one token of slack
// per line keeps the sum a lower bound. Evicted entries stay retrievable
// with get. A compaction that would not shrink the index changes nothing.
func (s *memorySession) Compact(_ context.Context, req sdk.CompactRequest) (sdk.CompactResult, error) {
	if req.TokensNeeded <= 0 {
		return sdk.CompactResult{Log: "memory: no tokens requested, nothing evicted"}, nil
	}
	if _, err := sdk.CountTokens(req.Encoding, ""); err != nil {
		return sdk.CompactResult{}, fmt.Errorf("memory compact: %w", err)
	}
	order := s.sortedBy(visible, evictionOrder)
	if len(order) == 0 {
		return sdk.CompactResult{Log: "memory: every entry is already evicted from the index"}, nil
	}
	evictedBefore := s.evictedCount()
	footerBefore := footerTokens(req.Encoding, evictedBefore)
	growth := footerTokens(req.Encoding, evictedBefore+1) - footerBefore // estimate: the footer's growth
	slack := 0
	if req.Encoding == approximateEncoding {
		slack = 1
	}
	lines, n, freed := 0, 0, 0 // order[:n] are evicted; lines: their tokens
	for n < len(order) {
		for n < len(order) && lines-growth < req.TokensNeeded {
			lines += s.lineTokens(order[n], req.Encoding) - slack
			n++
		}
		growth = footerTokens(req.Encoding, evictedBefore+n) - footerBefore
		if freed = lines - growth; freed >= req.TokensNeeded {
			break
		}
	}
	if freed <= 0 {
		return sdk.CompactResult{Log: fmt.Sprintf("memory: evicting would not shrink the index, nothing evicted (%d entries in it)", len(order))}, nil
	}
	for _, e := range order[:n] {
		e.Evicted = true
	}
	return sdk.CompactResult{Log: evictionLog(order[:n], n == len(order), freed, req.TokensNeeded), ClaimedFreed: freed}, nil
}

// lineTokens counts e's index line (with its newline) once per encoding.
// The encoding was checked by the caller, so counting cannot fail.
func (s *memorySession) lineTokens(e *entry, encoding string) int {
	if e.countedWith != encoding {
		e.lineTokens, _ = sdk.CountTokens(encoding, indexLine(e)+"\n")
		e.countedWith = encoding
	}
	return e.lineTokens
}

// footerTokens returns the tokens of the footer for n evicted entries (0
// for none). The encoding was checked by the caller.
func footerTokens(encoding string, n int) int {
	if n == 0 {
		return 0
	}
	t, _ := sdk.CountTokens(encoding, footer(n)+"\n")
	return t
}

// evictionLog says which entries were evicted and what it freed.
func evictionLog(evicted []*entry, exhausted bool, freed, needed int) string {
	keys := make([]string, 0, min(len(evicted), maxLoggedKeys))
	for _, e := range evicted[:min(len(evicted), maxLoggedKeys)] {
		keys = append(keys, e.Key)
	}
	list := strings.Join(keys, ", ")
	if more := len(evicted) - len(keys); more > 0 {
		list += fmt.Sprintf(" and %d more", more)
	}
	noun := "entries"
	if len(evicted) == 1 {
		noun = "entry"
	}
	msg := fmt.Sprintf("memory: evicted %d %s from the index (least recently used, lowest importance first): %s; freed %d of %d requested tokens",
		len(evicted), noun, list, freed, needed)
	if freed < needed && exhausted {
		msg += " (nothing more to evict)"
	}
	return msg
}
