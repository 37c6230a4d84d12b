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
func ToProtoComponentChanges(base, cur []sdk.Component) ([]*pb.ComponentChange, []sdk.Component) {
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
			if n := msgeq.Prefix(b.Messages, c.Messages); n == len(b.Messages) && n <= len(c.Messages) {
				used[j] = true
				next[i] = *b
				if n == len(c.Messages) {
					changes[i] = &pb.ComponentChange{Change: &pb.ComponentChange_Same{Same: int32(j)}}
					continue
				}
				added := c.Messages[n:]
				next[i].Messages = msgeq.AppendOwn(b.Messages, added)
				changes[i] = &pb.ComponentChange{Change: &pb.ComponentChange_Appended{Appended: &pb.AppendedMessages{
					Base: int32(j), Messages: toProtoMessages(added)}}}
				continue
			}
		}
		changes[i] = &pb.ComponentChange{Change: &pb.ComponentChange_Full{Full: ToProtoComponent(c)}}
		next[i] = msgeq.OwnComponent(*c)
	}
	return changes, next
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
