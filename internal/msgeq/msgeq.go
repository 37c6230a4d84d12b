// Package msgeq compares messages and components cheaply and keeps
// private copies of them: what a cache of a request's history (the
// assemblers' message cache, the assembler protocol's delta on both ends)
// needs to tell, without trusting the caller, which messages a new
// request repeats.
package msgeq

import (
	"bytes"
	"maps"
	"slices"
	"unsafe"

	"github.com/ctxhost/ctxhost/sdk"
)

// Equal reports whether a and b are equal in every field, their parts'
// and tool calls' included. Strings and byte slices that are the same
// bytes (as those a request shares with an earlier one) compare without
// reading them.
func Equal(a, b *sdk.Message) bool {
	return Same(a.Content, b.Content) && Same(a.ID, b.ID) && Same(a.Role, b.Role) && Same(a.Name, b.Name) &&
		Same(a.SpeakerType, b.SpeakerType) && Same(a.ToolCallID, b.ToolCallID) && Same(a.ToolName, b.ToolName) &&
		Same(a.Kind, b.Kind) && a.Pinned == b.Pinned && sameParts(a.Parts, b.Parts) && sameCalls(a.ToolCalls, b.ToolCalls) &&
		sameMap(a.Metadata, b.Metadata)
}

// Same is a == b, without a call when both are the same bytes.
func Same(a, b string) bool {
	return len(a) == len(b) && (len(a) == 0 || unsafe.StringData(a) == unsafe.StringData(b) || a == b)
}

func sameCalls(a, b []sdk.ToolCall) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if !Same(a[i].ID, b[i].ID) || !Same(a[i].Name, b[i].Name) || !Same(a[i].Arguments, b[i].Arguments) ||
			!Same(a[i].Signature, b[i].Signature) {
			return false
		}
	}
	return true
}

func sameParts(a, b []sdk.Part) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if !SamePart(&a[i], &b[i]) {
			return false
		}
	}
	return true
}

// SamePart reports whether a and b are equal in every field.
func SamePart(a, b *sdk.Part) bool {
	return Same(a.Type, b.Type) && Same(a.Text, b.Text) && Same(a.MediaType, b.MediaType) && sameBytes(a.Data, b.Data) &&
		Same(a.URL, b.URL) && a.Width == b.Width && a.Height == b.Height && Same(a.Detail, b.Detail) && a.Pages == b.Pages &&
		Same(a.Title, b.Title) && Same(a.Signature, b.Signature) && Same(a.Opaque, b.Opaque) && Same(a.Provider, b.Provider)
}

// sameBytes is bytes.Equal, without reading them when both are the same
// bytes; nil and empty are equal.
func sameBytes(a, b []byte) bool {
	return len(a) == len(b) && (len(a) == 0 || unsafe.SliceData(a) == unsafe.SliceData(b) || bytes.Equal(a, b))
}

func sameMap(a, b map[string]string) bool {
	return len(a) == 0 && len(b) == 0 || maps.Equal(a, b)
}

// Prefix returns how many leading messages of a and b are Equal.
func Prefix(a, b []sdk.Message) int {
	n := 0
	for n < len(a) && n < len(b) && Equal(&a[n], &b[n]) {
		n++
	}
	return n
}

// Own returns m with its own copy of its parts (their data included),
// tool calls and metadata, so that a caller changing them in place cannot
// change the copy.
func Own(m sdk.Message) sdk.Message {
	if m.Parts != nil {
		m.Parts = slices.Clone(m.Parts)
		for i := range m.Parts {
			if m.Parts[i].Data != nil {
				m.Parts[i].Data = slices.Clone(m.Parts[i].Data)
			}
		}
	}
	if m.ToolCalls != nil {
		m.ToolCalls = slices.Clone(m.ToolCalls)
	}
	if m.Metadata != nil {
		m.Metadata = maps.Clone(m.Metadata)
	}
	return m
}

// AppendOwn appends Own copies of msgs to dst.
func AppendOwn(dst []sdk.Message, msgs []sdk.Message) []sdk.Message {
	dst = slices.Grow(dst, len(msgs))
	for _, m := range msgs {
		dst = append(dst, Own(m))
	}
	return dst
}

// SameHeader reports whether a and b are equal in everything but their
// messages (whether each carries messages included).
func SameHeader(a, b *sdk.Component) bool {
	return Same(a.Name, b.Name) && a.Priority == b.Priority && a.Compactable == b.Compactable && a.Slot == b.Slot &&
		Same(a.Text, b.Text) && a.IsMessages() == b.IsMessages() && sameMap(a.Metadata, b.Metadata)
}

// OwnComponent returns c with its own copies of its messages and
// metadata; a message list stays one (non-nil) when empty.
func OwnComponent(c sdk.Component) sdk.Component {
	if c.Messages != nil {
		c.Messages = AppendOwn(make([]sdk.Message, 0, len(c.Messages)), c.Messages)
	}
	if c.Metadata != nil {
		c.Metadata = maps.Clone(c.Metadata)
	}
	return c
}
