package tokenizer

import (
	"hash/maphash"
	"sync/atomic"
)

// pieceCacheSize is the number of pre-tokens a pieceCache holds (a power
// of two): about 100 KB, so that it stays in a core's cache, where the
// rank map (hundreds of thousands of strings) mostly does not.
const pieceCacheSize = 4096

// pieceCacheMax is the longest pre-token a pieceCache holds; longer ones
// (rare in text) are looked up and merged each time.
const pieceCacheMax = 22

// pieceCache remembers the token counts of recent pre-tokens of one
// encoding, each under
// its bytes, direct-mapped by a hash: a text's words repeat, and most of
// the time of counting a pre-token went to finding it in the rank map (or
// merging it when it is not one token). An entry is the pre-token's own
// bytes, never a reference into a counted text.
type pieceCache struct {
	entries [pieceCacheSize]pieceEntry
}

type pieceEntry struct {
	n     uint8 // the pre-token's length; 0: empty
	count uint8 // its tokens
	b     [pieceCacheMax]byte
}

// pieceSeed is the hash seed of every pieceCache.
var pieceSeed = maphash.MakeSeed()

// lookup returns piece's count when the cache holds it, and the entry
// to store it in otherwise (nil when the piece is too long to hold).
func (c *pieceCache) lookup(piece string) (int, *pieceEntry) {
	if len(piece) > pieceCacheMax {
		return -1, nil
	}
	e := &c.entries[maphash.String(pieceSeed, piece)&(pieceCacheSize-1)]
	if int(e.n) == len(piece) && string(e.b[:e.n]) == piece {
		return int(e.count), nil
	}
	return -1, e
}

// store makes e hold piece's count (a count above 255 is not held).
func (e *pieceEntry) store(piece string, count int) {
	if count > 255 {
		e.n = 0
		return
	}
	e.n, e.count = uint8(len(piece)), uint8(count)
	copy(e.b[:], piece)
}

// pieceSlotCount is how many goroutines count through a cache at once;
// the others count without one.
const pieceSlotCount = 4

// pieceSlots are an encoding's caches, made on first use and kept for the
// process's life (about 400 KB): not a sync.Pool, which every garbage
// collection empties, so that near the soft memory limit, where
// collections follow each other, each count allocated a new cache.
type pieceSlots struct {
	slot [pieceSlotCount]struct {
		busy  atomic.Bool
		cache *pieceCache // written only by the goroutine holding busy
	}
}

// take returns a free cache, marked busy, and its slot; nil when every
// one is busy.
func (p *pieceSlots) take() (*pieceCache, int) {
	for i := range p.slot {
		s := &p.slot[i]
		if s.busy.CompareAndSwap(false, true) {
			if s.cache == nil {
				s.cache = new(pieceCache)
			}
			return s.cache, i
		}
	}
	return nil, -1
}

// give frees slot i, which take returned.
func (p *pieceSlots) give(i int) { p.slot[i].busy.Store(false) }

// countUncached is countOrdinary without a cache (every cache busy).
func (b *bpe) countUncached(s string) int {
	var scratch [scanMergeMax]int
	n := 0
	for i := 0; i < len(s); {
		j := b.next(s, i)
		if _, ok := b.ranks[s[i:j]]; ok {
			n++
		} else {
			n += len(b.merge(scratch[:0], s[i:j]))
		}
		i = j
	}
	return n
}
