// Package tokenizertest helps tests measure what code hands the tokenizer.
package tokenizertest

import "github.com/ctxhost/ctxhost/tokenizer"

// Tally is a tokenizer.Cutter that adds up the bytes of every text handed
// to it (Prefix and Suffix read a text once): a test of a cut's cost
// asserts on Bytes, which does not depend on the machine's load.
type Tally struct {
	tokenizer.Cutter
	Bytes int
}

// Count counts text and tallies it.
func (c *Tally) Count(text string) int {
	c.Bytes += len(text)
	return c.Cutter.Count(text)
}

// Prefix is the Cutter's Prefix, tallied.
func (c *Tally) Prefix(text string, n int) (int, int) {
	c.Bytes += len(text)
	return c.Cutter.Prefix(text, n)
}

// Suffix is the Cutter's Suffix, tallied.
func (c *Tally) Suffix(text string, n int) (int, int) {
	c.Bytes += len(text)
	return c.Cutter.Suffix(text, n)
}
