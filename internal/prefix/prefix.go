// Package prefix measures how much two byte sequences share from their
// start: what a payload repeats of the last one, so that only its new
// bytes are copied or sent.
package prefix

import "bytes"

// block is how many bytes Common compares at a time before it looks at
// single bytes: bytes.Equal on a block runs at memory speed, where a
// byte loop does not.
const block = 4096

// Common is the length of the longest common prefix of a and b.
func Common(a, b []byte) int {
	n := min(len(a), len(b))
	i := 0
	for i+block <= n && bytes.Equal(a[i:i+block], b[i:i+block]) {
		i += block
	}
	for i < n && a[i] == b[i] {
		i++
	}
	return i
}

// Common2 is the length of the longest common prefix of a0 followed by
// a1 and b0 followed by b1, without joining them.
func Common2(a0, a1, b0, b1 []byte) int {
	n := 0
	for {
		if len(a0) == 0 {
			a0, a1 = a1, nil
		}
		if len(b0) == 0 {
			b0, b1 = b1, nil
		}
		k := min(len(a0), len(b0))
		if k == 0 {
			return n
		}
		c := Common(a0[:k], b0[:k])
		n += c
		if c < k {
			return n
		}
		a0, b0 = a0[k:], b0[k:]
	}
}
