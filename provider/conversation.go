package provider

import (
	"strings"

	"github.com/ctxhost/ctxhost/sdk"
)

// Conversation is a caller's conversation (or its tail) decoded into sdk
// messages.
type Conversation struct {
	Messages []sdk.Message
	// System is a system text the conversation opens with (HasSystem: it
	// has one).
	System    string
	HasSystem bool
	// Later are the texts of the system and developer messages that come
	// after the conversation's opening, in order: system text too, never
	// history (see JoinSystem).
	Later []string
	// Turns is the number of the provider's elements decoded.
	Turns int
	// Dropped names what the request carried that ctxhost left out, one
	// entry each time (see Content.Dropped).
	Dropped []string
}

// JoinSystem is a session's system text: the one a conversation opens
// with, then the system texts that come later in it, each after a blank
// line.
func JoinSystem(opening string, later []string) string {
	parts := make([]string, 0, 1+len(later))
	if opening != "" {
		parts = append(parts, opening)
	}
	return strings.Join(append(parts, later...), "\n\n")
}
