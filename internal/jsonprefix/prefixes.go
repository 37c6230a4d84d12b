package jsonprefix

import (
	"bytes"
	"encoding/json"
	"hash/maphash"

	"github.com/ctxhost/ctxhost/internal/lru"
)

// Prefixes remembers the conversation arrays of recent requests (up to
// their closing brackets), found by the hash of their opening bytes, so
// that the next request of a conversation, whose array starts with the
// last one's bytes, has only its new elements delimited when its body is
// read: the known bytes are matched by a hash (much faster than scanning
// their structure) and were delimited and decoded whole on an earlier
// request. It knows nothing of sessions, so it works before a session is
// named. Each prefix keeps its hash's state, so that the next prefix,
// which extends it, is hashed from there: a request hashes its
// conversation once (to match the known part) plus what it added.
// A Prefixes is not safe for concurrent use beyond what its LRU allows
// (its methods may be called concurrently; each Prefix value is a copy).
type Prefixes struct {
	seed     maphash.Seed
	prefixes *lru.Cache[uint64, Prefix]
}

// Prefix is one array prefix: its length and hash (Len 0: none), and the
// state of the hash after its bytes.
type Prefix struct {
	Len   int
	Hash  uint64
	state maphash.Hash
}

// OpeningBytes is how many leading bytes of an array find its known
// prefix: arrays no longer than that are not remembered (they are cheap
// to scan).
const OpeningBytes = 1024

// NewPrefixes returns a memory of up to size prefixes, hashed with seed.
func NewPrefixes(seed maphash.Seed, size int) *Prefixes {
	return &Prefixes{seed: seed, prefixes: lru.New[uint64, Prefix](size)}
}

// Seed is the hash seed the prefixes are hashed with.
func (k *Prefixes) Seed() maphash.Seed { return k.seed }

// Add remembers prefix (an array without its closing bracket; nil is
// ignored), extending from, a known prefix it starts with (its len 0:
// none), and returns it, hashed.
func (k *Prefixes) Add(prefix []byte, from Prefix) Prefix {
	p := from
	if p.Len == 0 || p.Len > len(prefix) {
		p = Prefix{}
		p.state.SetSeed(k.seed)
	}
	_, _ = p.state.Write(prefix[p.Len:])
	p.Len, p.Hash = len(prefix), p.state.Sum64()
	if len(prefix) > OpeningBytes { // a short array is cheap to scan
		k.prefixes.Put(maphash.Bytes(k.seed, prefix[:OpeningBytes]), p)
	}
	return p
}

// Match returns the known prefix that array (from its opening bracket on)
// starts with; its Len is 0 when there is none.
func (k *Prefixes) Match(array []byte) Prefix {
	if len(array) <= OpeningBytes {
		return Prefix{}
	}
	p, ok := k.prefixes.Get(maphash.Bytes(k.seed, array[:OpeningBytes]))
	if !ok || p.Len >= len(array) || maphash.Bytes(k.seed, array[:p.Len]) != p.Hash {
		return Prefix{}
	}
	return p
}

// ArrayPrefix is raw (a JSON array) without its closing bracket (and space around it).
func ArrayPrefix(raw json.RawMessage) []byte {
	p := bytes.TrimRight(raw, " \t\r\n")
	if len(p) == 0 || p[len(p)-1] != ']' {
		return nil
	}
	return bytes.TrimRight(p[:len(p)-1], " \t\r\n")
}
