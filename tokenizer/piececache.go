package tokenizer

import "hash/maphash"

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
