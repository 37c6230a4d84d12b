package client

import "github.com/ctxhost/ctxhost/internal/lru"

// DefaultPayloadCache is how many payloads a Client keeps by default (one
// per session and agent, the most recently used).
const DefaultPayloadCache = 64

// payloadCache keeps the last payload of the most recently prepared
// sessions and agents, so that Prepare can name the payload it holds
// (known_payload_tag) and the service can leave an unchanged one out of
// its answer. A nil payloadCache holds nothing.
type payloadCache struct {
	held *lru.Cache[payloadKey, *heldPayload]
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
	return &payloadCache{held: lru.New[payloadKey, *heldPayload](limit)}
}

// get returns the payload held for k, or nil.
func (c *payloadCache) get(k payloadKey) *heldPayload {
	if c == nil {
		return nil
	}
	p, _ := c.held.Get(k)
	return p
}

// put holds p (one with a tag), dropping the least recently used payload
// beyond the limit.
func (c *payloadCache) put(p *heldPayload) {
	if c == nil || p.tag == "" {
		return
	}
	c.held.Put(p.key, p)
}

// forget drops every payload held for session.
func (c *payloadCache) forget(session string) {
	if c == nil {
		return
	}
	c.held.DeleteFunc(func(k payloadKey) bool { return k.session == session })
}
