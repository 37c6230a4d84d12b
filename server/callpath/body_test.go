package callpath

import (
	"bytes"
	"encoding/json"
	"io"
	"strings"
	"testing"
	"weak"

	"github.com/ctxhost/ctxhost/engine"
)

// TestBodyReaderDetach: a body reads as its parts joined, in reads of any
// size; once detached, what was not read yet is the parts' bytes as they
// were, whatever is written into their memory after, and a reader opened
// after the detach is refused.
func TestBodyReaderDetach(t *testing.T) {
	payload := []byte(strings.Repeat("0123456789", 200))
	var bb bodyBuilder
	bb.writeByte('{')
	bb.member(true, "model", json.RawMessage(`"m"`))
	bb.member(false, "messages", payload)
	bb.member(false, "stream", json.RawMessage(`false`))
	bb.writeByte('}')
	b := bb.body()
	want := `{"model":"m","messages":` + string(payload) + `,"stream":false}`
	if got := string(b.bytes()); got != want || b.len() != len(want) {
		t.Fatalf("body %d bytes:\n got %s\nwant %s", b.len(), got, want)
	}
	if len(b.parts) != 3 || &b.parts[1][0] != &payload[0] {
		t.Fatalf("the long value is not sent where it is: %d parts", len(b.parts))
	}
	for _, step := range []int{1, 7, 512, 4096} {
		copy(payload, strings.Repeat("0123456789", 200))
		rs := &bodyReaders{b: b}
		r, err := rs.open()
		if err != nil {
			t.Fatal(err)
		}
		var got bytes.Buffer
		buf := make([]byte, step)
		for got.Len() < len(want)/2 {
			n, err := r.Read(buf)
			if err != nil {
				t.Fatal(err)
			}
			got.Write(buf[:n])
		}
		rs.detach()
		copy(payload, strings.Repeat("x", len(payload))) // the next call reuses the memory
		rest, err := io.ReadAll(r)
		if err != nil {
			t.Fatal(err)
		}
		got.Write(rest)
		if got.String() != want {
			t.Fatalf("reads of %d: the body changed under the transport:\n got %s\nwant %s", step, got.String(), want)
		}
		if _, err := rs.open(); err != errBodyDetached {
			t.Fatalf("a reader opened after the detach: %v", err)
		}
		_ = r.Close()
		if n, err := r.Read(buf); n != 0 || err != io.EOF {
			t.Fatalf("a closed reader read %d, %v", n, err)
		}
	}
}

// TestPayloadLinkKnown: a payload's conversation prefix is known from
// the last payload's only when the host says the payload extends that
// very payload of the same loaded session and repeats at least its bytes
// up to the end of the prefix, with the array at the same place.
func TestPayloadLinkKnown(t *testing.T) {
	es, other := &engine.Session{}, &engine.Session{}
	link := payloadLink{es: weak.Make(es), id: 7, at: 40, prefix: 1000}
	ok := &engine.Prepared{PayloadID: 8, Extends: 7, Repeats: 1040}
	if got := link.known(es, ok, 40); got != 1000 {
		t.Fatalf("a payload repeating the whole prefix: known %d, want 1000", got)
	}
	for name, c := range map[string]struct {
		es *engine.Session
		p  *engine.Prepared
		at int
	}{
		"another payload":              {es, &engine.Prepared{PayloadID: 8, Extends: 6, Repeats: 5000}, 40},
		"no payload extended":          {es, &engine.Prepared{PayloadID: 8, Repeats: 5000}, 40},
		"repeats less than the prefix": {es, &engine.Prepared{PayloadID: 8, Extends: 7, Repeats: 1039}, 40},
		"the array elsewhere":          {es, ok, 41},
		"the session loaded again":     {other, ok, 40},
	} {
		if got := link.known(c.es, c.p, c.at); got != 0 {
			t.Errorf("%s: known %d, want 0", name, got)
		}
	}
	if got := (payloadLink{}).known(es, &engine.Prepared{Extends: 0, Repeats: 5000}, 0); got != 0 {
		t.Errorf("no link: known %d", got)
	}
}
