package assembly

import "strings"

// SystemBody joins system text parts so that no provider sees blank
// sections: each part is trimmed, empty and whitespace-only parts are
// dropped, the rest are joined by a blank line. An empty result means "no system section".
func SystemBody(parts ...string) string {
	kept := make([]string, 0, len(parts))
	for _, p := range parts {
		if t := strings.TrimSpace(p); t != "" {
			kept = append(kept, t)
		}
	}
	return strings.Join(kept, "\n\n")
}
