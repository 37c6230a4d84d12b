package provider

import "github.com/ctxhost/ctxhost/sdk"

// Conversation is a caller's conversation (or its tail) decoded into sdk
// messages.
type Conversation struct {
	Messages []sdk.Message
	// System is a system text the conversation opens with (HasSystem: it
	// has one).
	System    string
	HasSystem bool
	// Turns is the number of the provider's elements decoded.
	Turns int
	// Dropped names what the request carried that ctxhost left out, one
	// entry each time (see Content.Dropped).
	Dropped []string
}
