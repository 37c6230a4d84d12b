package history

import (
	"fmt"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"

	"github.com/ctxhost/ctxhost/sdk"
)

// messageIDs finds a message's index by its id. Nearly every id is one the
// History gave ("m1", "m2", ...): those are found by their number in a
// slice, four bytes a message, and only other ids take a map entry. A
// long session so keeps no map of its messages.
type messageIDs struct {
	own   []int32        // own[n]: the index of message "m<n>"; -1: none
	other map[string]int // every other id
}

func newMessageIDs() messageIDs { return messageIDs{other: map[string]int{}} }

// ownSlack is how far past the slice's end an "m<n>" id may lie and still
// go in the slice (a caller's "m999999999" goes in the map).
const ownSlack = 1024

// ownNumber is n for an id "m<n>" (n > 0, no leading zero).
func ownNumber(id string) (int, bool) {
	if len(id) < 2 || len(id) > 10 || id[0] != 'm' || id[1] == '0' {
		return 0, false
	}
	n, err := strconv.Atoi(id[1:])
	if err != nil || n <= 0 || strconv.Itoa(n) != id[1:] {
		return 0, false
	}
	return n, true
}

func (x *messageIDs) get(id string) (int, bool) {
	if n, ok := ownNumber(id); ok && n < len(x.own) && x.own[n] >= 0 {
		return int(x.own[n]), true
	}
	i, ok := x.other[id]
	return i, ok
}

// put records id (not yet used) at index i.
func (x *messageIDs) put(id string, i int) {
	n, ok := ownNumber(id)
	if !ok || n >= len(x.own)+ownSlack {
		x.other[id] = i
		return
	}
	for len(x.own) <= n {
		x.own = append(x.own, -1)
	}
	x.own[n] = int32(i)
}

func (x *messageIDs) del(id string) {
	if n, ok := ownNumber(id); ok && n < len(x.own) && x.own[n] >= 0 {
		x.own[n] = -1
		return
	}
	delete(x.other, id)
}

// kind is a message kind as an entry holds it: an index into the kind
// names, one byte rather than a string.
type kind uint8

var (
	kindMu    sync.Mutex               // serializes adding a name
	kindNames atomic.Pointer[[]string] // replaced, never changed, when a name is added
)

func init() {
	names := append([]string{""}, sdk.Kinds...)
	kindNames.Store(&names)
}

// kindOf is k's index, k added to the names when new (a kind is checked
// against sdk.Kinds before it is stored, so they never outgrow a byte).
func kindOf(k string) kind {
	if i := slices.Index(*kindNames.Load(), k); i >= 0 {
		return kind(i)
	}
	kindMu.Lock()
	defer kindMu.Unlock()
	names := *kindNames.Load()
	if i := slices.Index(names, k); i >= 0 {
		return kind(i)
	}
	if len(names) > 255 {
		panic(fmt.Sprintf("history: more than 256 message kinds (%q)", k))
	}
	names = append(slices.Clip(names), k)
	kindNames.Store(&names)
	return kind(len(names) - 1)
}

func (k kind) name() string { return (*kindNames.Load())[k] }
