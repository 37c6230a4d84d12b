package main

import "github.com/ctxhost/ctxhost/internal/replay"

// naive is the naive trimmer's request for the call carrying r's first n
// messages: the system text (and tools) and the most recent messages that
// fit budget, a message kept with the one it belongs with (a tool result
// with its call). The latest message goes even when it alone does not fit.
func naive(r *replay.Rendered, n, budget int, c *counter) *sent {
	fixed := c.of(r.Extra) + 3
	total := fixed
	from := n
	for from > 0 {
		start := from - 1
		for start > 0 && r.Attached[start] {
			start--
		}
		size := c.of(r.Texts[start:from])
		if total+size > budget && from < n {
			break
		}
		total += size
		from = start
	}
	return &sent{texts: r.Texts[from:n], extra: r.Extra, tokens: total}
}

// dropStart is OpenAI's truncation "auto" for the same call: the oldest
// items dropped one by one (a tool result may lose its call) until the
// rest fits budget, the instructions kept; the last item stays even when
// it alone does not fit.
func dropStart(r *replay.Rendered, n, budget int, c *counter) *sent {
	total := c.of(r.Extra) + 3 + c.of(r.Texts[:n])
	from := 0
	for total > budget && from < n-1 {
		total -= c.one(r.Texts[from])
		from++
	}
	return &sent{texts: r.Texts[from:n], extra: r.Extra, tokens: total}
}
