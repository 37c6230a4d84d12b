package jsonprefix

import (
	"bytes"
	"encoding/json"
	"hash/maphash"
)

// Arriving matches a request body's conversation array with the known
// prefixes (Prefixes.Match) while the body arrives: the bytes
// of a long conversation come in over a while, and hashing each part as
// it comes takes the hash of a megabyte of known conversation off the
// time between the body's last byte and the call going upstream. It finds
// the conversation member by the structure of the members before it (as
// ParseRequest delimits them), looks its opening bytes up once they are
// in, and hashes the candidate prefix on as bytes arrive. What it finds
// is what Match finds on the whole body.
type Arriving struct {
	k    *Prefixes
	name string // the conversation member's name
	pos  int    // where the search for the member goes on: after whole members
	at   int    // the array's offset in the body (-1: not found yet)
	// done: nothing more to find (the verdict is matched, len 0: none).
	done    bool
	cand    Prefix // the prefix the array's opening bytes name
	looked  bool   // cand was looked up
	h       maphash.Hash
	hashed  int
	matched Prefix
}

// Arriving starts matching the body of one request whose conversation is
// the member named conversation.
func (k *Prefixes) Arriving(conversation string) *Arriving {
	return &Arriving{k: k, name: conversation, at: -1}
}

// Feed takes the body read so far (it only grows, in the same array).
func (a *Arriving) Feed(data []byte) {
	if a.done {
		return
	}
	if a.at < 0 && !a.find(data) {
		return
	}
	if !a.looked {
		if len(data)-a.at <= OpeningBytes {
			return
		}
		p, ok := a.k.prefixes.Get(maphash.Bytes(a.k.seed, data[a.at:a.at+OpeningBytes]))
		if !ok {
			a.done = true
			return
		}
		a.cand, a.looked = p, true
		a.h.SetSeed(a.k.seed)
	}
	if end := min(len(data)-a.at, a.cand.Len); end > a.hashed {
		_, _ = a.h.Write(data[a.at+a.hashed : a.at+end])
		a.hashed = end
	}
}

// Finish takes the whole body and returns the known prefix the array at
// offset at starts with (len 0: none), and whether the verdict is the
// arriving prefix's (else the caller matches the array itself).
func (a *Arriving) Finish(body []byte, at int) (Prefix, bool) {
	if a == nil {
		return Prefix{}, false
	}
	a.Feed(body)
	if at != a.at {
		return Prefix{}, false
	}
	if !a.done && a.looked && a.hashed == a.cand.Len && a.cand.Len < len(body)-a.at && a.h.Sum64() == a.cand.Hash {
		a.matched = a.cand
	}
	a.done = true
	return a.matched, true
}

// find looks for the conversation member in the members of the object
// that are in whole (each with the comma after it), from where the last
// search stopped; it reports whether the array's offset is known. A body
// it cannot follow ends the search: ParseRequest says what is wrong.
func (a *Arriving) find(data []byte) bool {
	i := a.pos
	if i == 0 {
		i = skipSpace(data, 0)
		if i >= len(data) {
			return false
		}
		if data[i] != '{' {
			a.done = true
			return false
		}
		i++
		a.pos = i
	}
	for {
		i = skipSpace(data, i)
		if i >= len(data) {
			return false
		}
		if data[i] != '"' {
			a.done = true // the closing brace, or not JSON
			return false
		}
		end, err := skipString(data, i)
		if err != nil {
			return false // the name is not in yet
		}
		name := data[i+1 : end-1]
		if bytes.IndexByte(name, '\\') >= 0 {
			var s string
			if json.Unmarshal(data[i:end], &s) != nil {
				a.done = true
				return false
			}
			name = []byte(s)
		}
		j := skipSpace(data, end)
		if j >= len(data) {
			return false
		}
		if data[j] != ':' {
			a.done = true
			return false
		}
		j = skipSpace(data, j+1)
		if j >= len(data) {
			return false
		}
		if string(name) == a.name {
			if data[j] != '[' {
				a.done = true
				return false
			}
			a.at = j
			return true
		}
		v, err := skipValue(data, j)
		if err != nil {
			return false // not in yet (or not JSON: ParseRequest will say)
		}
		v = skipSpace(data, v)
		if v >= len(data) {
			return false // a number may go on; the comma is not in yet
		}
		if data[v] != ',' {
			a.done = true // the last member, or not JSON
			return false
		}
		i, a.pos = v+1, v+1
	}
}
