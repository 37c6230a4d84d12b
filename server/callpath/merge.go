package callpath

import (
	"encoding/json"

	"github.com/ctxhost/ctxhost/internal/jsonprefix"
)

// merge returns the caller's fields with managed fields taken from
// payload: each managed field of the payload replaces the caller's (in
// the caller's place, or added at the end), a managed field the payload
// leaves out is dropped. Fields of the payload that are neither managed
// nor in skip are added when the caller has none of that name. The body's
// long values are the caller's and the payload's own bytes (see body).
func merge(caller, payload jsonprefix.Object, managed, skip []string) body {
	var bb bodyBuilder
	bb.writeByte('{')
	n := 0
	write := func(key string, v json.RawMessage) {
		bb.member(n == 0, key, v)
		n++
	}
	done := map[string]bool{}
	for _, m := range caller {
		if contains(managed, m.Key) {
			if v := payload.Get(m.Key); v != nil {
				write(m.Key, v)
			}
			done[m.Key] = true
			continue
		}
		write(m.Key, m.Value)
		done[m.Key] = true
	}
	for _, m := range payload {
		if done[m.Key] || contains(skip, m.Key) {
			continue
		}
		write(m.Key, m.Value)
	}
	bb.writeByte('}')
	return bb.body()
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}
