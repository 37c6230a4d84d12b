package main

import "github.com/ctxhost/ctxhost/internal/replay"

// naive is the naive trimmer's request for the call carrying r's first n
// messages: the system text (and tools) and the most recent messages that
// fit budget, a message kept with the one it belongs with (a tool result
// with its call). The latest message goes even when it alone does not fit.
func naive(r *replay.Rendered, n, budget int, c *counter) *sent {
	lead := min(r.Leading, n-1)
	total := c.of(r.Extra) + 3 + c.of(r.Texts[:lead])
	from := n
	for from > lead {
		start := from - 1
		for start > lead && r.Attached[start] {
			start--
		}
		size := c.of(r.Texts[start:from])
		if total+size > budget && from < n {
			break
		}
		total += size
		from = start
	}
	return &sent{texts: append(append([]string{}, r.Texts[:lead]...), r.Texts[from:n]...), extra: r.Extra, tokens: total}
}

// dropStart is OpenAI's truncation "auto" for the same call: the oldest
// items dropped one by one (a tool result may lose its call) until the
// rest fits budget, the instructions (and a leading system message) kept;
// the last item stays even when it alone does not fit.
func dropStart(r *replay.Rendered, n, budget int, c *counter) *sent {
	lead := min(r.Leading, n-1)
	total := c.of(r.Extra) + 3 + c.of(r.Texts[:n])
	from := lead
	for total > budget && from < n-1 {
		total -= c.one(r.Texts[from])
		from++
	}
	return &sent{texts: append(append([]string{}, r.Texts[:lead]...), r.Texts[from:n]...), extra: r.Extra, tokens: total}
}
