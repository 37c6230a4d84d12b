package facts

import (
	"sync"

	"github.com/ctxhost/ctxhost/sdk"
)

// maxCached bounds a Cache: past it, the cache starts again empty.
const maxCached = 1 << 16

// Cache remembers the facts of messages by id and size, so that a
// message is read (a spilled one loaded) and extracted once however
// often the facts of the messages not shown are gathered. It is safe for
// concurrent use; the zero value is ready.
type Cache struct {
	mu sync.Mutex
	m  map[cacheKey][]Fact
}

type cacheKey struct {
	id   string
	size int
}

// Of returns the facts of the message with id and size (any figure that
// changes when the message does, such as its tokens), extracting them
// from load() the first time.
func (c *Cache) Of(id string, size int, load func() sdk.Message) []Fact {
	k := cacheKey{id, size}
	c.mu.Lock()
	fs, ok := c.m[k]
	c.mu.Unlock()
	if ok {
		return fs
	}
	fs = FromMessage(load())
	c.mu.Lock()
	if c.m == nil || len(c.m) >= maxCached {
		c.m = map[cacheKey][]Fact{}
	}
	c.m[k] = fs
	c.mu.Unlock()
	return fs
}

// Len is how many messages the cache holds.
func (c *Cache) Len() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.m)
}
