// Package lru is a map of bounded size that drops its least recently used
// entry to make room: the per-stream state that assemblers, the host's
// assembler deltas and the service client keep for the most recent
// sessions.
package lru

import (
	"container/list"
	"sync"
)

// Cache holds at most a fixed number of values by key. It is safe for
// concurrent use.
type Cache[K comparable, V any] struct {
	mu    sync.Mutex
	max   int
	order *list.List // of *entry[K, V], most recently used first
	items map[K]*list.Element
}

type entry[K comparable, V any] struct {
	key K
	val V
}

// New returns a Cache of at most size values (at least 1).
func New[K comparable, V any](size int) *Cache[K, V] {
	return &Cache[K, V]{max: max(size, 1), order: list.New(), items: map[K]*list.Element{}}
}

// Get returns the value of key, marked used.
func (c *Cache[K, V]) Get(key K) (V, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if e, ok := c.items[key]; ok {
		c.order.MoveToFront(e)
		return e.Value.(*entry[K, V]).val, true
	}
	var zero V
	return zero, false
}

// GetOrAdd returns the value of key, marked used; when there is none it
// adds the one create makes (called with the cache locked).
func (c *Cache[K, V]) GetOrAdd(key K, create func() V) V {
	c.mu.Lock()
	defer c.mu.Unlock()
	if e, ok := c.items[key]; ok {
		c.order.MoveToFront(e)
		return e.Value.(*entry[K, V]).val
	}
	v := create()
	c.add(key, v)
	return v
}

// Put sets the value of key, marked used.
func (c *Cache[K, V]) Put(key K, val V) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if e, ok := c.items[key]; ok {
		e.Value.(*entry[K, V]).val = val
		c.order.MoveToFront(e)
		return
	}
	c.add(key, val)
}

// DeleteFunc drops every value whose key del reports true for.
func (c *Cache[K, V]) DeleteFunc(del func(K) bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for k, e := range c.items {
		if del(k) {
			c.order.Remove(e)
			delete(c.items, k)
		}
	}
}

// DeleteValues drops every value that del reports true for, given its key.
func (c *Cache[K, V]) DeleteValues(del func(K, V) bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for k, e := range c.items {
		if del(k, e.Value.(*entry[K, V]).val) {
			c.order.Remove(e)
			delete(c.items, k)
		}
	}
}

// Delete drops the value of key, if any.
func (c *Cache[K, V]) Delete(key K) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if e, ok := c.items[key]; ok {
		c.order.Remove(e)
		delete(c.items, key)
	}
}

// Len is the number of values held.
func (c *Cache[K, V]) Len() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.items)
}

// add adds key (absent) and drops the least recently used beyond max; the
// caller holds c.mu.
func (c *Cache[K, V]) add(key K, val V) {
	c.items[key] = c.order.PushFront(&entry[K, V]{key: key, val: val})
	for c.order.Len() > c.max {
		last := c.order.Back()
		c.order.Remove(last)
		delete(c.items, last.Value.(*entry[K, V]).key)
	}
}
