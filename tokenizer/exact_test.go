package tokenizer

import "strings"

// pathological are inputs with no pre-token break (or very long runs),
// which a quadratic byte-pair merge cannot handle.
func pathological(n int) map[string]string {
	return map[string]string{
		"equals":    strings.Repeat("=", n),
		"letters":   strings.Repeat("a", n),
		"spaces":    strings.Repeat(" ", n),
		"digits":    strings.Repeat("7", n),
		"newlines":  strings.Repeat(" \n", n/2),
		"cjk":       strings.Repeat("語", n/3),
		"emoji":     strings.Repeat("👍", n/4),
		"upper":     strings.Repeat("A", n),
		"mixed":     strings.Repeat("=", n/4) + strings.Repeat("a", n/4) + strings.Repeat(" ", n/4) + strings.Repeat("-.", n/8),
		"invalid":   strings.Repeat("\xff", n),
		"combining": strings.Repeat("e\u0301", n/3),
	}
}
