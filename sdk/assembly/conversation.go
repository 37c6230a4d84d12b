package assembly

import (
	"strings"

	"github.com/ctxhost/ctxhost/sdk"
)

// ConversationCache renders history as RenderConversation does, keeping
// each message's rendering per stream of requests (see MessageCache), so
// a request that appends k messages renders only those k and joins.
type ConversationCache struct {
	cache *MessageCache[renderedMessage]
}

// renderedMessage is one message as RenderConversation shows it; skip:
// it shows nothing (IsBlank).
type renderedMessage struct {
	text string
	skip bool
}

// NewConversationCache returns a cache that keeps the last streams
// streams used (DefaultCacheStreams when streams <= 0).
func NewConversationCache(streams int) *ConversationCache {
	return &ConversationCache{cache: NewMessageCache[renderedMessage](streams)}
}

// Release drops what the cache keeps for session's streams.
func (c *ConversationCache) Release(session string) { c.cache.Release(session) }

// Render is RenderConversation(msgs), reusing the renderings of the
// messages the last request of req's stream had.
func (c *ConversationCache) Render(req sdk.AssembleRequest, msgs []sdk.Message) string {
	rendered := c.cache.Derive(req, msgs, func(_ int, m sdk.Message, ctx *MessageContext) renderedMessage {
		if IsBlank(m) {
			return renderedMessage{skip: true}
		}
		return renderedMessage{text: ctx.RenderMessage(m)}
	})
	size := 0
	for _, r := range rendered {
		size += len(r.text) + 1
	}
	var b strings.Builder
	b.Grow(size)
	for _, r := range rendered {
		if r.skip {
			continue
		}
		if b.Len() > 0 {
			b.WriteString("\n")
		}
		b.WriteString(r.text)
	}
	return b.String()
}
