package serve

import (
	"bytes"
	"errors"
	"testing"

	"github.com/ctxhost/ctxhost/internal/wire"
	"github.com/ctxhost/ctxhost/internal/wire/pb"
	"github.com/ctxhost/ctxhost/sdk"
)

func TestCommonPrefix(t *testing.T) {
	long := bytes.Repeat([]byte("abcdefgh"), 2000)
	changed := bytes.Clone(long)
	changed[9000] = 'X'
	for _, tc := range []struct {
		a, b []byte
		want int
	}{
		{nil, []byte("x"), 0},
		{[]byte("abc"), []byte("abd"), 2},
		{[]byte("abc"), []byte("abcdef"), 3},
		{long, long, len(long)},
		{long, changed, 9000},
		{long, append(bytes.Clone(long), 'z'), len(long)},
	} {
		if got := commonPrefix(tc.a, tc.b); got != tc.want {
			t.Errorf("commonPrefix(%d bytes, %d bytes) = %d, want %d", len(tc.a), len(tc.b), got, tc.want)
		}
	}
}

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
