package tokenizer

import (
	"math/bits"
	"sort"
)

// The backtracking encoder byte-pair encodes a pre-token in time linear in
// its length, with the same result as tiktoken's merge. It rests on one
// property of byte-pair encoding: a sequence of tokens spelling a text is
// that text's encoding exactly when every two adjacent tokens are a valid
// pair, one that encoding their bytes together gives back (the merges
// inside each token happen before any merge across them). So the encoder
// takes the longest token at each position and, when it does not pair
// validly with the token before it, tries the next shorter token there,
// backing up a token when none fits; positions from which no encoding can
// finish are marked, so none is tried twice. Whether a pair is valid is
// decided by undoing the merges that made its two tokens, from the last,
// and checking that no merge across them comes first. This is the
// algorithm of GitHub's rust-gems bpe crate (its "backtracking encoder");
// the tests compare it with tiktoken's merge on every token of both
// vocabularies and on random and adversarial pieces.

// noToken marks the absence of a token in the tables below.
const noToken = ^uint32(0)

// backtracker holds what the backtracking encoder needs of a vocabulary,
// built once on first use of a long pre-token.
type backtracker struct {
	tokStart []uint32    // token t's bytes are tokBytes[tokStart[t]:tokStart[t+1]]
	tokBytes []byte      // every token's bytes, in rank order
	split    [][2]uint32 // the two tokens whose merge makes t; {t, t} for a byte
	nextPre  []uint32    // the longest token that is a strict prefix of t
	pairs    pairTable   // (left, right) -> the token their merge makes
	trie     tokenTrie
}

func (bt *backtracker) tokenLen(t uint32) int {
	return int(bt.tokStart[t+1] - bt.tokStart[t])
}

// newBacktracker builds the tables from the ranks (rank = token id).
func newBacktracker(ranks map[string]int) *backtracker {
	n := 0
	for _, r := range ranks {
		n = max(n, r+1)
	}
	byRank := make([]string, n) // "" where a rank is unused
	for tok, r := range ranks {
		byRank[r] = tok
	}
	bt := &backtracker{tokStart: make([]uint32, n+1)}
	for r, tok := range byRank {
		bt.tokStart[r] = uint32(len(bt.tokBytes))
		bt.tokBytes = append(bt.tokBytes, tok...)
	}
	bt.tokStart[n] = uint32(len(bt.tokBytes))
	bt.trie = buildTrie(byRank)
	bt.nextPre = make([]uint32, n)
	for r, tok := range byRank {
		bt.nextPre[r] = noToken
		if len(tok) > 1 {
			bt.nextPre[r] = bt.trie.longest(tok[:len(tok)-1])
		}
	}
	// The merge that makes each token is its split into two earlier tokens
	// that are a valid pair, the longest left part first: a token's last
	// merge joins the two tokens its bytes encode to without it.
	bt.split = make([][2]uint32, n)
	bt.pairs = newPairTable(n)
	for r, tok := range byRank {
		id := uint32(r)
		bt.split[id] = [2]uint32{id, id}
		for left := bt.nextPre[id]; left != noToken; left = bt.nextPre[left] {
			rest, ok := ranks[tok[bt.tokenLen(left):]]
			right := uint32(rest)
			if ok && left < id && right < id && bt.validPair(left, right) {
				bt.split[id] = [2]uint32{left, right}
				bt.pairs.put(left, right, id)
				break
			}
		}
	}
	return bt
}

// validPair reports whether left followed by right is how their bytes
// encode: undoing the merges that made them, the later first, no pair
// across the boundary merges before the merge it would undo.
func (bt *backtracker) validPair(left, right uint32) bool {
	limit := noToken // the merges across the boundary must come after this
	for {
		if m := bt.pairs.get(left, right); m != noToken && m < limit {
			return false
		}
		if left > right {
			limit = left
			left = bt.split[left][1]
			if left == limit { // a byte: nothing left to undo on the left
				limit = right + 1
				right = bt.split[right][0]
				if right+1 == limit {
					return true
				}
			}
		} else {
			limit = right + 1
			right = bt.split[right][0]
			if right+1 == limit {
				limit = left
				left = bt.split[left][1]
				if left == limit {
					return true
				}
			}
		}
	}
}

// encode appends the tokens of piece (one pre-token, not itself a token).
func (bt *backtracker) encode(out []int, piece string) []int {
	n := len(piece)
	// open has a bit per position: cleared once no encoding of the rest
	// can start there.
	var buf [4]uint64
	open := buf[:]
	if n/64+1 > len(buf) {
		open = make([]uint64, n/64+1)
	}
	for i := range open {
		open[i] = ^uint64(0)
	}
	var seen *pairCache
	if n > 256 {
		seen = new(pairCache)
	}
	base := len(out)
	pos := 0
	next := bt.trie.longest(piece)
	for pos < n {
		tok := next
		last := noToken
		if len(out) > base {
			last = uint32(out[len(out)-1])
		}
		for {
			end := pos + bt.tokenLen(tok)
			if open[end>>6]&(1<<(end&63)) != 0 && (last == noToken || seen.validPair(bt, last, tok)) {
				out = append(out, int(tok))
				pos = end
				if pos < n {
					next = bt.trie.longest(piece[pos:])
				}
				break
			}
			if shorter := bt.nextPre[tok]; shorter != noToken {
				tok = shorter
				continue
			}
			// Nothing fits here: this position is a dead end; back up.
			open[pos>>6] &^= 1 << (pos & 63)
			out = out[:len(out)-1]
			pos -= bt.tokenLen(last)
			next = last
			break
		}
	}
	return out
}

// pairCache remembers the validity of the last pairs looked at, direct
// mapped: a long pre-token tends to repeat a few pairs (one repeated letter
// or word is the same handful of pairs over and over), and each validity
// is several look-ups of the vocabulary's tables.
type pairCache [512]uint64 // left<<32 | right<<1 | valid, with bit 63 set; 0 when empty

func (c *pairCache) validPair(bt *backtracker, left, right uint32) bool {
	if c == nil {
		return bt.validPair(left, right)
	}
	key := 1<<63 | uint64(left)<<32 | uint64(right)<<1
	slot := &c[(key*0x9E3779B97F4A7C15)>>55]
	if *slot&^1 == key {
		return *slot&1 != 0
	}
	ok := bt.validPair(left, right)
	*slot = key
	if ok {
		*slot |= 1
	}
	return ok
}

// pairTable maps a pair of tokens to the token their merge makes, by open
// addressing (a Go map of the same costs several times as much per look-up).
type pairTable struct {
	keys  []uint64 // left<<32 | right, ^0 when empty
	vals  []uint32
	shift uint
}

func newPairTable(n int) pairTable {
	size := 1 << bits.Len(uint(2*n))
	t := pairTable{keys: make([]uint64, size), vals: make([]uint32, size), shift: uint(64 - bits.Len(uint(size-1)))}
	for i := range t.keys {
		t.keys[i] = ^uint64(0)
	}
	return t
}

func (t *pairTable) slot(k uint64) int { return int((k * 0x9E3779B97F4A7C15) >> t.shift) }

func (t *pairTable) put(left, right, merged uint32) {
	k := uint64(left)<<32 | uint64(right)
	mask := len(t.keys) - 1
	for i := t.slot(k); ; i = (i + 1) & mask {
		if t.keys[i] == ^uint64(0) || t.keys[i] == k {
			t.keys[i], t.vals[i] = k, merged
			return
		}
	}
}

func (t *pairTable) get(left, right uint32) uint32 {
	k := uint64(left)<<32 | uint64(right)
	mask := len(t.keys) - 1
	for i := t.slot(k); ; i = (i + 1) & mask {
		switch t.keys[i] {
		case k:
			return t.vals[i]
		case ^uint64(0):
			return noToken
		}
	}
}

// tokenTrie is a byte trie of the vocabulary in breadth-first order, so a
// node's children are consecutive nodes, sorted by their byte.
type tokenTrie struct {
	two   []uint32 // the node of every two-byte prefix, noToken if none
	first []uint32 // first child of each node
	count []uint16 // number of children
	label []byte   // the byte that leads to each node
	token []uint32 // the token a node spells, or noToken
}

// buildTrie builds the trie of the tokens (byRank[r] is token r's bytes, ""
// for an unused rank) level by level: the distinct prefixes of each length,
// in sorted order, are that level's nodes, and each one's parent is its
// prefix one byte shorter on the level before.
func buildTrie(byRank []string) tokenTrie {
	rankOf := make(map[string]uint32, len(byRank))
	var sorted []string
	for r, tok := range byRank {
		if tok != "" {
			rankOf[tok] = uint32(r)
			sorted = append(sorted, tok)
		}
	}
	sort.Strings(sorted)
	t := tokenTrie{first: []uint32{0}, count: []uint16{0}, label: []byte{0}, token: []uint32{noToken}}
	prev := []string{""} // the previous level's prefixes
	prevID := uint32(0)  // the node of prev[0]
	for depth := 1; ; depth++ {
		var level []string
		for _, tok := range sorted {
			if len(tok) >= depth && (len(level) == 0 || level[len(level)-1] != tok[:depth]) {
				level = append(level, tok[:depth])
			}
		}
		if len(level) == 0 {
			t.two = make([]uint32, 1<<16)
			for i := range t.two {
				t.two[i] = t.child(0, byte(i>>8))
				if t.two[i] != noToken {
					t.two[i] = t.child(t.two[i], byte(i))
				}
			}
			return t
		}
		id := uint32(len(t.token))
		p := 0
		for _, pre := range level {
			for prev[p] != pre[:depth-1] {
				p++
			}
			parent := prevID + uint32(p)
			if t.count[parent] == 0 {
				t.first[parent] = id
			}
			t.count[parent]++
			tok := noToken
			if r, ok := rankOf[pre]; ok {
				tok = r
			}
			t.first = append(t.first, 0)
			t.count = append(t.count, 0)
			t.label = append(t.label, pre[depth-1])
			t.token = append(t.token, tok)
			id++
		}
		prev, prevID = level, prevID+uint32(len(prev))
	}
}

// child returns the child of node by byte c, or noToken.
func (t *tokenTrie) child(node uint32, c byte) uint32 {
	f, k := t.first[node], uint32(t.count[node])
	if k == 256 {
		return f + uint32(c)
	}
	labels := t.label[f : f+k]
	if k <= 16 {
		for i, l := range labels {
			if l == c {
				return f + uint32(i)
			}
		}
		return noToken
	}
	lo, hi := 0, len(labels)
	for lo < hi {
		m := int(uint(lo+hi) >> 1)
		if labels[m] < c {
			lo = m + 1
		} else {
			hi = m
		}
	}
	if lo < len(labels) && labels[lo] == c {
		return f + uint32(lo)
	}
	return noToken
}

// longest returns the longest token that s starts with, or noToken.
func (t *tokenTrie) longest(s string) uint32 {
	best, node, i := noToken, uint32(0), 0
	if len(s) >= 2 { // the first two bytes by one look-up
		node1 := t.child(0, s[0])
		if node1 == noToken {
			return noToken
		}
		best = t.token[node1]
		if node = t.two[int(s[0])<<8|int(s[1])]; node == noToken {
			return best
		}
		if tok := t.token[node]; tok != noToken {
			best = tok
		}
		i = 2
	}
	for ; i < len(s); i++ {
		if node = t.child(node, s[i]); node == noToken {
			break
		}
		if tok := t.token[node]; tok != noToken {
			best = tok
		}
	}
	return best
}
