package host

import (
	"github.com/ctxhost/ctxhost/sdk"
	"github.com/ctxhost/ctxhost/tokenizer"
)

// textCounts remembers the counts of the texts counted in an agent's
// current turn and in its turn before, so that a text counted again (a
// view's messages, turn after turn and across trimView's tries) is
// tokenized once; a text not counted in a turn is forgotten after it.
// Counting is a function of the text alone, so a remembered count is the
// count. It is used under the session's lock.
type textCounts struct {
	prev, next map[string]int
}

// newTurn starts a turn: the texts the turn before did not count are
// forgotten.
func (c *textCounts) newTurn() {
	c.prev, c.next = c.next, nil
}

// count returns counter's count of text.
func (c *textCounts) count(counter tokenizer.Counter, text string) int {
	if n, ok := c.next[text]; ok {
		return n
	}
	n, ok := c.prev[text]
	if !ok {
		n = counter.Count(text)
	}
	if c.next == nil {
		c.next = map[string]int{}
	}
	c.next[text] = n
	return n
}

// message returns the tokens of m as the history counts it (framed when
// f is set), each text counted through c.
func (c *textCounts) message(counter tokenizer.Counter, f *sdk.Framing, m sdk.Message) int {
	count := func(text string) int { return c.count(counter, text) }
	if f != nil {
		return f.MessageTokens(count, m)
	}
	return count(sdk.MessageText(m))
}
