package serve

import (
	"errors"
	"fmt"
	"slices"
	"testing"

	"github.com/ctxhost/ctxhost/internal/wire"
	"github.com/ctxhost/ctxhost/internal/wire/pb"
	"github.com/ctxhost/ctxhost/sdk"
)

// TestBases: a delta is rebuilt on the base it names and answered with
// the payload's new part only; a delta naming another version, an
// evicted stream or no stream at all is UNKNOWN_BASE; a whole request
// replaces the base and is answered whole.
func TestBases(t *testing.T) {
	bs := newBases(1)
	text := func(s string) *pb.Component {
		return &pb.Component{Name: "input", Slot: "input", Content: &pb.Component_Text{Text: s}}
	}
	whole := &pb.AssembleRequest{BaseId: "a", Version: 1, Components: []*pb.Component{text("one")}}
	delta := func(base, version uint64, change *pb.ComponentChange) *pb.AssembleRequest {
		return &pb.AssembleRequest{BaseId: "a", Version: version, Delta: &pb.AssembleDelta{BaseVersion: base, Components: []*pb.ComponentChange{change}}}
	}
	unknown := func(err error) bool { k, _ := wire.ErrorKindOf(err); return k == wire.ErrorUnknownBase }

	req, turn, err := bs.request(whole)
	if err != nil || req.Components[0].Text != "one" {
		t.Fatalf("whole request: %v %+v", err, req)
	}
	if res := turn.answer(sdk.AssembleResult{Payload: []byte("payload one")}); string(res.Payload) != "payload one" || res.PayloadPrefix != 0 {
		t.Errorf("a whole request answered %q from %d", res.Payload, res.PayloadPrefix)
	}
	req, turn, err = bs.request(delta(1, 2, &pb.ComponentChange{Change: &pb.ComponentChange_Same{Same: 0}}))
	if err != nil || req.Components[0].Text != "one" {
		t.Fatalf("delta: %v %+v", err, req)
	}
	if res := turn.answer(sdk.AssembleResult{Payload: []byte("payload two")}); string(res.Payload) != "two" || res.PayloadPrefix != 8 {
		t.Errorf("a delta answered %q after %d bytes, want %q after 8", res.Payload, res.PayloadPrefix, "two")
	}
	if _, _, err := bs.request(delta(1, 3, &pb.ComponentChange{Change: &pb.ComponentChange_Same{Same: 0}})); !unknown(err) {
		t.Errorf("a delta on an old version: %v, want UNKNOWN_BASE", err)
	}
	if _, _, err := bs.request(&pb.AssembleRequest{BaseId: "b", Version: 1, Components: []*pb.Component{text("b")}}); err != nil {
		t.Fatal(err)
	}
	if _, _, err := bs.request(delta(2, 3, &pb.ComponentChange{Change: &pb.ComponentChange_Same{Same: 0}})); !unknown(err) {
		t.Errorf("a delta on an evicted stream: %v, want UNKNOWN_BASE", err)
	}
	if _, _, err := bs.request(&pb.AssembleRequest{Delta: &pb.AssembleDelta{}}); !unknown(err) {
		t.Errorf("a delta without a base id: %v, want UNKNOWN_BASE", err)
	}
	if _, _, err := bs.request(&pb.AssembleRequest{BaseId: "b", Version: 1, Components: []*pb.Component{text("b")}}); err != nil {
		t.Fatal(err)
	}
	if _, _, err := bs.request(&pb.AssembleRequest{BaseId: "b", Version: 2, Delta: &pb.AssembleDelta{BaseVersion: 1,
		Components: []*pb.ComponentChange{{Change: &pb.ComponentChange_Same{Same: 5}}}}}); err == nil || unknown(err) || !errors.Is(wire.FromStatus(err), sdk.ErrInvalidArgs) {
		t.Errorf("a delta naming a component the base lacks: %v, want INVALID_ARGS", err)
	}
}

// TestAnswerPayloadHead: a PayloadHead that extends the last one is
// answered after it without comparing (a difference in the bytes before
// its end goes unnoticed, which shows nothing was compared); a head in
// another array, a shorter one or none falls back to the common prefix
// of the whole payloads; a request without a base id is answered whole;
// the requests on a base carry ImmutableMessages.
func TestAnswerPayloadHead(t *testing.T) {
	bs := newBases(4)
	msgs := func(s ...string) []*pb.Message {
		out := make([]*pb.Message, len(s))
		for i := range s {
			out[i] = &pb.Message{Role: "user", Content: s[i]}
		}
		return out
	}
	whole := &pb.AssembleRequest{BaseId: "a", Version: 1, Components: []*pb.Component{{Name: "history", Slot: "history",
		Content: &pb.Component_Messages{Messages: &pb.MessageList{Messages: msgs("one")}}}}}
	version := uint64(1)
	appendOne := func(s string) *pb.AssembleRequest {
		version++
		return &pb.AssembleRequest{BaseId: "a", Version: version, Delta: &pb.AssembleDelta{BaseVersion: version - 1,
			Components: []*pb.ComponentChange{{Change: &pb.ComponentChange_Appended{Appended: &pb.AppendedMessages{Base: 0, Messages: msgs(s)}}}}}}
	}
	buf := make([]byte, 0, 64)
	buf = append(buf, "HEAD:one"...)
	turnOf := func(r *pb.AssembleRequest) *turn {
		t.Helper()
		req, tr, err := bs.request(r)
		if err != nil || !req.ImmutableMessages {
			t.Fatalf("request: %v, immutable %v", err, req.ImmutableMessages)
		}
		return tr
	}
	check := func(name string, res *pb.AssembleResponse, payload string, prefix uint64) {
		t.Helper()
		if string(res.Payload) != payload || res.PayloadPrefix != prefix {
			t.Errorf("%s: answered %q after %d bytes, want %q after %d", name, res.Payload, res.PayloadPrefix, payload, prefix)
		}
	}
	res := turnOf(whole).answer(sdk.AssembleResult{PayloadHead: buf[:len(buf):len(buf)], Payload: []byte("|rest1")})
	check("whole", res, "HEAD:one|rest1", 0)

	tr := turnOf(appendOne("two"))
	buf = append(buf, ",two"...)
	buf[0] = 'h' // the last head's bytes, never changed by a real assembler: not compared
	res = tr.answer(sdk.AssembleResult{PayloadHead: buf[:len(buf):len(buf)], Payload: []byte("|rest2")})
	check("an extended head", res, ",two|rest2", 8)
	buf[0] = 'H'

	tr = turnOf(appendOne("three"))
	res = tr.answer(sdk.AssembleResult{PayloadHead: buf[:len(buf):len(buf)], Payload: []byte("|rest3")})
	check("the same head", res, "|rest3", 12)

	tr = turnOf(appendOne("four"))
	other := []byte("HEAD:one,tw")
	res = tr.answer(sdk.AssembleResult{PayloadHead: other, Payload: []byte("o;four|rest4")})
	check("a head in another array", res, ";four|rest4", 12)

	tr = turnOf(appendOne("five"))
	res = tr.answer(sdk.AssembleResult{PayloadHead: other[:5], Payload: []byte("one,two;four|rest5")})
	check("a shorter head", res, "5", 22)

	tr = turnOf(appendOne("six"))
	res = tr.answer(sdk.AssembleResult{Payload: []byte("HEAD:one,two;four|rest6")})
	check("no head", res, "6", 22)

	tr = turnOf(appendOne("seven"))
	res = tr.answer(sdk.AssembleResult{PayloadHead: []byte("HEAD:"), Payload: []byte("x")})
	check("nothing in common past the head", res, "x", 5)

	req, tr, err := bs.request(&pb.AssembleRequest{Components: whole.Components})
	if err != nil || tr != nil || req.ImmutableMessages {
		t.Fatalf("a request without a base id: %v %v immutable %v", err, tr, req.ImmutableMessages)
	}
	check("without a base id", tr.answer(sdk.AssembleResult{PayloadHead: []byte("HEAD"), Payload: []byte("|rest")}), "HEAD|rest", 0)
}

// TestBasesAppendInPlace: the messages a delta appends go into the base's
// array after the messages handed out, which stay as they were.
func TestBasesAppendInPlace(t *testing.T) {
	bs := newBases(4)
	comp := &pb.Component{Name: "history", Slot: "history", Content: &pb.Component_Messages{Messages: &pb.MessageList{Messages: []*pb.Message{{Role: "user", Content: "m0"}}}}}
	req, _, err := bs.request(&pb.AssembleRequest{BaseId: "a", Version: 1, Components: []*pb.Component{comp}})
	if err != nil {
		t.Fatal(err)
	}
	var handed [][]sdk.Message
	var copies [][]sdk.Message
	handed = append(handed, req.Components[0].Messages)
	copies = append(copies, slices.Clone(req.Components[0].Messages))
	for v := uint64(2); v < 40; v++ {
		req, _, err = bs.request(&pb.AssembleRequest{BaseId: "a", Version: v, Delta: &pb.AssembleDelta{BaseVersion: v - 1,
			Components: []*pb.ComponentChange{{Change: &pb.ComponentChange_Appended{Appended: &pb.AppendedMessages{
				Messages: []*pb.Message{{Role: "user", Content: fmt.Sprint("m", v-1)}}}}}}}})
		if err != nil {
			t.Fatal(err)
		}
		if v%7 == 0 { // a failed rebuild on the same base writes beyond the held length only
			if _, _, err := bs.request(&pb.AssembleRequest{BaseId: "a", Version: v + 100, Delta: &pb.AssembleDelta{BaseVersion: v,
				Components: []*pb.ComponentChange{{Change: &pb.ComponentChange_Appended{Appended: &pb.AppendedMessages{
					Messages: []*pb.Message{{Role: "user", Content: "failed"}}}}}, {Change: &pb.ComponentChange_Same{Same: 9}}}}}); err == nil {
				t.Fatal("a delta naming a missing component was accepted")
			}
		}
		msgs := req.Components[0].Messages
		if len(msgs) != int(v) || msgs[len(msgs)-1].Content != fmt.Sprint("m", v-1) {
			t.Fatalf("version %d: %d messages, last %q", v, len(msgs), msgs[len(msgs)-1].Content)
		}
		handed = append(handed, msgs)
		copies = append(copies, slices.Clone(msgs))
		for k := range handed {
			if !slices.EqualFunc(handed[k], copies[k], func(a, b sdk.Message) bool { return a.Content == b.Content }) {
				t.Fatalf("version %d: the messages handed out at version %d changed", v, k+1)
			}
		}
	}
}
