package callpath

import (
	"testing"

	"github.com/ctxhost/ctxhost/internal/jsonprefix"
)

// A conversation the delimiting parse took without validating is refused
// when it is decoded.
func TestUnvalidatedConversationRefusedOnDecode(t *testing.T) {
	for _, bad := range []string{`[{"role":"user","content":"a"},}]`, `[{"role":"user","content":"a` + "\x01" + `"}]`, `[{"role":"user" "content":"a"}]`, `[{]`} {
		o, err := jsonprefix.ParseRequest([]byte(`{"model":"m","messages":`+bad+`}`), "messages", nil)
		if err != nil {
			continue // refused already
		}
		if err := decode(chatDialect{}, &request{raw: o.Get("messages")}); err == nil {
			t.Errorf("the conversation %q was decoded", bad)
		}
	}
}
