package tooloutput

import (
	"context"
	"fmt"
	"strings"

	"github.com/ctxhost/ctxhost/sdk"
)

// maxLoggedIDs bounds the ids named in a compaction log.
const maxLoggedIDs = 20

// approximateEncoding counts ceil(characters / 4): its block counts do not
// add up exactly, so Compact keeps one token of slack per changed block.
const approximateEncoding = "approximate"

// Compact frees tokens in two phases, oldest output first, stopping as soon
// as TokensNeeded tokens are freed:
//
//  1. replace outputs shown in full by their placeholders (skipping those
//     whose placeholder would not be shorter);
//  2. drop outputs (by then mostly placeholders) from the component.
//
// It is one pass per phase: each block is counted once per encoding (and
// remembered), and the freed tokens are summed block by block, which is
// exact for the BPE encodings (see render). A compaction that would not
// shrink the component changes nothing; a drop phase that would cost more
// than it frees is undone. get_output still returns every original.
func (s *toolOutputSession) Compact(_ context.Context, req sdk.CompactRequest) (sdk.CompactResult, error) {
	if req.TokensNeeded <= 0 {
		return sdk.CompactResult{Log: "tool_outputs: no tokens requested, nothing compacted"}, nil
	}
	if _, err := sdk.CountTokens(req.Encoding, ""); err != nil {
		return sdk.CompactResult{}, fmt.Errorf("tool_outputs compact: %w", err)
	}
	slack := 0
	if req.Encoding == approximateEncoding {
		slack = 1
	}
	masked, freed := s.maskOldest(req.Encoding, req.TokensNeeded, slack)
	var dropped []*output
	if freed < req.TokensNeeded {
		var freedByDrops int
		dropped, freedByDrops = s.dropOldest(req.Encoding, req.TokensNeeded-freed, slack)
		if freedByDrops <= 0 {
			undo(dropped, func(o *output) { o.Dropped = false })
			dropped = nil
		} else {
			freed += freedByDrops
		}
	}
	if len(masked) == 0 && len(dropped) == 0 {
		return sdk.CompactResult{Log: "tool_outputs: nothing left to mask or drop that would shrink the component"}, nil
	}
	return sdk.CompactResult{Log: compactionLog(masked, dropped, freed, req.TokensNeeded), ClaimedFreed: freed}, nil
}

// maskOldest masks full outputs, oldest first, until needed tokens are
// freed; it returns the masked outputs and the tokens freed.
func (s *toolOutputSession) maskOldest(encoding string, needed, slack int) ([]*output, int) {
	var masked []*output
	freed := 0
	for i, o := range s.outputs {
		if freed >= needed {
			break
		}
		if s.shown(i) != shownFull {
			continue
		}
		full, placeholder := s.blockTokens(o, encoding)
		if saving := full - placeholder - slack; saving > 0 {
			o.Masked = true
			masked = append(masked, o)
			freed += saving
		}
	}
	return masked, freed
}

// dropOldest drops shown outputs, oldest first, until needed tokens are
// freed, accounting for the growth of the "N older outputs dropped" line;
// it returns the dropped outputs and the tokens freed (possibly <= 0 when
// the line costs more than the blocks it replaces).
func (s *toolOutputSession) dropOldest(encoding string, needed, slack int) ([]*output, int) {
	droppedBefore := s.droppedCount()
	lineBefore := droppedLineTokens(encoding, droppedBefore)
	growth := droppedLineTokens(encoding, droppedBefore+1) - lineBefore // estimate
	var dropped []*output
	blocks, freed := 0, 0
	i := 0
	for i < len(s.outputs) {
		for ; i < len(s.outputs) && blocks-growth < needed; i++ {
			shown := s.shown(i)
			if shown == shownDropped {
				continue
			}
			o := s.outputs[i]
			full, placeholder := s.blockTokens(o, encoding)
			if shown == shownFull {
				blocks += full - slack
			} else {
				blocks += placeholder - slack
			}
			o.Dropped = true
			dropped = append(dropped, o)
		}
		growth = droppedLineTokens(encoding, droppedBefore+len(dropped)) - lineBefore
		if freed = blocks - growth; freed >= needed {
			break
		}
	}
	return dropped, freed
}

// blockTokens counts o's full and placeholder blocks once per encoding.
// The encoding was checked by the caller, so counting cannot fail.
func (s *toolOutputSession) blockTokens(o *output, encoding string) (full, placeholder int) {
	if o.countedWith != encoding {
		o.fullTokens, _ = sdk.CountTokens(encoding, fullBlock(o))
		o.placeholderTokens, _ = sdk.CountTokens(encoding, placeholderBlock(o))
		o.countedWith = encoding
	}
	return o.fullTokens, o.placeholderTokens
}

// droppedLineTokens counts the dropped line for n outputs (0 for none).
func droppedLineTokens(encoding string, n int) int {
	if n == 0 {
		return 0
	}
	t, _ := sdk.CountTokens(encoding, droppedLine(n))
	return t
}

func undo(os []*output, f func(*output)) {
	for _, o := range os {
		f(o)
	}
}

// compactionLog says what was masked and dropped and what it freed.
func compactionLog(masked, dropped []*output, freed, needed int) string {
	var parts []string
	if len(masked) > 0 {
		parts = append(parts, fmt.Sprintf("masked %d (%s)", len(masked), idList(masked)))
	}
	if len(dropped) > 0 {
		parts = append(parts, fmt.Sprintf("dropped %d (%s)", len(dropped), idList(dropped)))
	}
	return fmt.Sprintf("tool_outputs: %s, oldest first; freed %d of %d requested tokens", strings.Join(parts, ", "), freed, needed)
}

// idList names up to maxLoggedIDs outputs.
func idList(os []*output) string {
	ids := make([]string, 0, min(len(os), maxLoggedIDs))
	for _, o := range os[:min(len(os), maxLoggedIDs)] {
		ids = append(ids, o.ID)
	}
	s := strings.Join(ids, ", ")
	if more := len(os) - len(ids); more > 0 {
		s += fmt.Sprintf(" and %d more", more)
	}
	return s
}
