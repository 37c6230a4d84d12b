package tokenizer

// heapNode is a part of a pre-token during mergeHeap, in a doubly linked
// list indexed by where the part starts: its token id, and the rank of its
// pair with the next part (noRank once the part has been merged away).
type heapNode struct{ prev, next, id, rank int32 }

// mergeHeap makes the same merges as mergeScan in O(n log n): candidate
// pairs sit in a min-heap keyed by (rank, start), so the top is the lowest
// rank and the leftmost among equal ranks. A candidate whose part has
// since changed its pair rank is stale and skipped; a part's rank names its
// pair's bytes, since no two tokens share a rank.
func (b *bpe) mergeHeap(out []int, piece string) []int {
	n := int32(len(piece))
	nodes := make([]heapNode, n+1)
	h := make(mergeHeap, 0, n)
	for k := range n {
		nodes[k] = heapNode{prev: k - 1, next: k + 1, id: b.byteRank[piece[k]], rank: noRank}
		if k+1 < n {
			if r := b.pairRank[int(piece[k])<<8|int(piece[k+1])]; r != noRank {
				nodes[k].rank = r
				h = append(h, candidate(r, k))
			}
		}
	}
	nodes[n] = heapNode{prev: n - 1, next: -1, rank: noRank}
	h.init()
	rankAt := func(i int32) int32 {
		j := nodes[i].next
		if j < 0 || j == n {
			return noRank
		}
		return b.rankOf(piece, i, nodes[j].next)
	}
	for len(h) > 0 {
		top := h.pop()
		rank, i := int32(top>>32), int32(uint32(top))
		if nodes[i].rank != rank {
			continue
		}
		j := nodes[i].next
		k := nodes[j].next
		nodes[j].rank = noRank
		nodes[i].next = k
		nodes[k].prev = i
		nodes[i].id = rank
		if r := rankAt(i); r != noRank {
			h.push(candidate(r, i))
			nodes[i].rank = r
		} else {
			nodes[i].rank = noRank
		}
		if p := nodes[i].prev; p >= 0 {
			if r := rankAt(p); r != noRank {
				h.push(candidate(r, p))
				nodes[p].rank = r
			} else {
				nodes[p].rank = noRank
			}
		}
	}
	for i := int32(0); i < n; i = nodes[i].next {
		out = append(out, int(nodes[i].id))
	}
	return out
}

// mergeHeap is a binary min-heap of merge candidates, each packed as
// rank<<32 | start so that one comparison orders by rank, then by start.
type mergeHeap []uint64

func candidate(rank, start int32) uint64 { return uint64(rank)<<32 | uint64(uint32(start)) }

func (h mergeHeap) init() {
	for i := len(h)/2 - 1; i >= 0; i-- {
		h.down(i)
	}
}

func (h *mergeHeap) push(c uint64) {
	*h = append(*h, c)
	s := *h
	i := len(s) - 1
	for i > 0 {
		p := (i - 1) / 2
		if s[p] <= s[i] {
			break
		}
		s[p], s[i] = s[i], s[p]
		i = p
	}
}

func (h *mergeHeap) pop() uint64 {
	s := *h
	top := s[0]
	last := len(s) - 1
	s[0] = s[last]
	*h = s[:last]
	h.down(0)
	return top
}

func (h mergeHeap) down(i int) {
	for {
		l := 2*i + 1
		if l >= len(h) {
			return
		}
		m := l
		if r := l + 1; r < len(h) && h[r] < h[l] {
			m = r
		}
		if h[i] <= h[m] {
			return
		}
		h[i], h[m] = h[m], h[i]
		i = m
	}
}
