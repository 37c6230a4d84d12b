package wire

import (
	"fmt"

	"github.com/ctxhost/ctxhost/internal/msgeq"
	"github.com/ctxhost/ctxhost/internal/wire/pb"
	"github.com/ctxhost/ctxhost/sdk"
)

// CapAssembleDelta is the AssemblerInfo capability of an assembler that
// keeps each stream's last request and accepts the next one as a delta
// against it (AssembleRequest.delta).
const CapAssembleDelta = "delta"

// CapRelease is the AssemblerInfo capability of an assembler that drops
// what it keeps for a session when told that the session left the
// host's memory (Assembler.Release).
const CapRelease = "release"

// HasCapability reports whether an assembler's wire description declares
// capability c.
func HasCapability(info *pb.AssemblerInfo, c string) bool {
	for _, have := range info.GetCapabilities() {
		if have == c {
			return true
		}
	}
	return false
}

// ToProtoComponentChanges is the delta of cur against base, the
// components of the stream's last acknowledged request as the sender
// keeps them: per component of cur, the index of an equal base component
// of the same name, or that component's messages appended to (the other
// fields equal, base's messages a prefix of cur's), or cur's component in
// full. It also returns what the sender keeps as the next base once the
// assembler acknowledges the request: private copies (so a caller
// changing cur afterwards cannot change them), base's own extended in
// place where messages were appended, so a turn that appends k messages
// costs O(k) beyond comparing.
//
// With immutable (sdk.AssembleRequest.ImmutableMessages: message lists
// are never written once given, and a list sharing its first element with
// an earlier one extends it), the next base keeps cur's message lists
// themselves, and a list that shares its array with the base's is known
// to extend it without comparing a message: a turn that appends k
// messages then costs O(k).
func ToProtoComponentChanges(base, cur []sdk.Component, immutable bool) ([]*pb.ComponentChange, []sdk.Component) {
	byName := make(map[string]int, len(base))
	for j := len(base) - 1; j >= 0; j-- {
		byName[base[j].Name] = j
	}
	used := make([]bool, len(base)) // a base component stands for one of cur's at most
	changes := make([]*pb.ComponentChange, len(cur))
	next := make([]sdk.Component, len(cur))
	for i := range cur {
		c := &cur[i]
		j, ok := byName[c.Name]
		if ok && !used[j] && msgeq.SameHeader(&base[j], c) {
			b := &base[j]
			n := 0
			if immutable && extends(c.Messages, b.Messages) {
				n = len(b.Messages)
			} else {
				n = msgeq.Prefix(b.Messages, c.Messages)
			}
			if n == len(b.Messages) && n <= len(c.Messages) {
				used[j] = true
				next[i] = *b
				if n == len(c.Messages) {
					changes[i] = &pb.ComponentChange{Change: &pb.ComponentChange_Same{Same: int32(j)}}
					continue
				}
				added := c.Messages[n:]
				if immutable { // kept as given, capped: never appended to in place
					next[i].Messages = c.Messages[:len(c.Messages):len(c.Messages)]
				} else {
					next[i].Messages = msgeq.AppendOwn(b.Messages, added)
				}
				changes[i] = &pb.ComponentChange{Change: &pb.ComponentChange_Appended{Appended: &pb.AppendedMessages{
					Base: int32(j), Messages: toProtoMessages(added)}}}
				continue
			}
		}
		changes[i] = &pb.ComponentChange{Change: &pb.ComponentChange_Full{Full: ToProtoComponent(c)}}
		next[i] = keep(*c, immutable)
	}
	return changes, next
}

// KeptComponents is what a sender keeps of a request sent whole as the
// base of its next delta (see ToProtoComponentChanges).
func KeptComponents(cur []sdk.Component, immutable bool) []sdk.Component {
	next := make([]sdk.Component, len(cur))
	for i, c := range cur {
		next[i] = keep(c, immutable)
	}
	return next
}

// keep is a component as a sender keeps it: a private copy, or with
// immutable, its message list itself (capped, so never appended to in
// place) and a copy of the rest.
func keep(c sdk.Component, immutable bool) sdk.Component {
	if !immutable {
		return msgeq.OwnComponent(c)
	}
	msgs := c.Messages
	c.Messages = nil
	c = msgeq.OwnComponent(c)
	if msgs != nil {
		c.Messages = msgs[:len(msgs):len(msgs)]
	}
	return c
}

// extends reports whether cur is base extended: both non-empty views of
// one array starting at the same element, cur at least as long. Only
// immutable message lists make that proof that base's messages are cur's
// first ones.
func extends(cur, base []sdk.Message) bool {
	return len(base) > 0 && len(cur) >= len(base) && &cur[0] == &base[0]
}

// FromProtoComponentChanges rebuilds a delta request's components from
// the base request's: an unchanged component is base's, an appended-to
// one base's messages with the new ones appended in place (base is
// replaced by the result: its messages beyond their length are free), a
// full one converted. An index out of range, a base component used twice
// or messages appended to a text component is an error.
func FromProtoComponentChanges(base []sdk.Component, changes []*pb.ComponentChange) ([]sdk.Component, error) {
	used := make([]bool, len(base))
	pick := func(i int, j int32) (*sdk.Component, error) {
		if j < 0 || int(j) >= len(base) || used[j] {
			return nil, fmt.Errorf("component %d: base component %d does not exist or is used twice", i, j)
		}
		used[j] = true
		return &base[j], nil
	}
	out := make([]sdk.Component, len(changes))
	for i, ch := range changes {
		switch c := ch.GetChange().(type) {
		case *pb.ComponentChange_Same:
			b, err := pick(i, c.Same)
			if err != nil {
				return nil, err
			}
			out[i] = *b
		case *pb.ComponentChange_Appended:
			b, err := pick(i, c.Appended.GetBase())
			if err != nil {
				return nil, err
			}
			if !b.IsMessages() {
				return nil, fmt.Errorf("component %d: messages appended to %q, which holds text", i, b.Name)
			}
			out[i] = *b
			for _, m := range c.Appended.GetMessages() {
				out[i].Messages = append(out[i].Messages, fromProtoMessage(m))
			}
		case *pb.ComponentChange_Full:
			out[i] = *FromProtoComponent(c.Full)
		default:
			return nil, fmt.Errorf("component %d: no change given", i)
		}
	}
	return out, nil
}

func toProtoMessages(msgs []sdk.Message) []*pb.Message {
	out := make([]*pb.Message, len(msgs))
	for i := range msgs {
		out[i] = toProtoMessage(&msgs[i])
	}
	return out
}
