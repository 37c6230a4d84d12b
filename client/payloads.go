package client

import (
	"container/list"
	"sync"
)

// DefaultPayloadCache is how many payloads a Client keeps by default (one
// per session and agent, the most recently used).
const DefaultPayloadCache = 64

// payloadCache keeps the last payload of the most recently prepared
// sessions and agents, so that Prepare can name the payload it holds
// (known_payload_tag) and the service can leave an unchanged one out of
// its answer.
type payloadCache struct {
	mu    sync.Mutex
	limit int
	order *list.List // of *heldPayload, most recent first
	items map[payloadKey]*list.Element
}

type payloadKey struct{ session, agent string }

// heldPayload is a payload and the tag the service gave it.
type heldPayload struct {
	key     payloadKey
	tag     string
	payload string
	system  string
}

func newPayloadCache(limit int) *payloadCache {
	return &payloadCache{limit: limit, order: list.New(), items: map[payloadKey]*list.Element{}}
}

// get returns the payload held for k, or nil (always nil when the cache
// is off).
func (c *payloadCache) get(k payloadKey) *heldPayload {
	if c == nil {
		return nil
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if e, ok := c.items[k]; ok {
		c.order.MoveToFront(e)
		return e.Value.(*heldPayload)
	}
	return nil
}

// put holds p, dropping the least recently used payload beyond the limit.
func (c *payloadCache) put(p *heldPayload) {
	if c == nil || p.tag == "" {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if e, ok := c.items[p.key]; ok {
		e.Value = p
		c.order.MoveToFront(e)
		return
	}
	c.items[p.key] = c.order.PushFront(p)
	for c.order.Len() > c.limit {
		last := c.order.Back()
		c.order.Remove(last)
		delete(c.items, last.Value.(*heldPayload).key)
	}
}

// forget drops every payload held for session.
func (c *payloadCache) forget(session string) {
	if c == nil {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	for k, e := range c.items {
		if k.session == session {
			c.order.Remove(e)
			delete(c.items, k)
		}
	}
}
