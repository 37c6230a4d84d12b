package callpath

import (
	"fmt"

	"github.com/ctxhost/ctxhost/internal/jsonprefix"
)

// parsePayload reads an assembled payload. One from a first-party
// assembler built into this process (req.builtInPayload) is well formed
// by construction (its bytes are what its golden and schema tests check),
// so its conversation member (field) is only delimited (its known
// prefix, as a caller's, matched by hash). Any other is
// validated, as a plugin's answer is never trusted: every member but the
// conversation as jsonprefix.ParseRequest does, and the conversation whole, or, when
// it starts with the conversation of a payload validated on an earlier
// call, only the elements after those: an array prefix that was valid
// followed by valid elements is a valid array. The payload is known to
// start so by the host's word that it repeats the last payload's bytes
// (req.payloadKnown, see payloadLink), or else by matching a hash
// (req.payloads).
func parsePayload(req *request, payload []byte, field string) (jsonprefix.Object, error) {
	var matched jsonprefix.Prefix
	known, linked, at := 0, false, -1
	o, err := jsonprefix.ParseRequest(payload, field, func(array []byte) int {
		at = len(payload) - len(array)
		if req.payloadKnown != nil {
			if n := req.payloadKnown(at); n > 0 && n < len(array) {
				known, linked = n, true
				return n
			}
		}
		if req.payloads != nil {
			matched = req.payloads.Match(array)
			known = matched.Len
		}
		return known
	})
	if err != nil {
		return nil, err
	}
	conv := o.Get(field)
	if conv == nil {
		return o, nil
	}
	if !req.builtInPayload && !jsonprefix.ValidArray(conv, known) {
		return nil, fmt.Errorf("read JSON field %q: invalid JSON", field)
	}
	if p := jsonprefix.ArrayPrefix(conv); p != nil && at >= 0 {
		req.payloadAt, req.payloadPrefix = at, len(p)
		if !linked && req.payloads != nil {
			req.payloads.Add(p, matched)
		}
	}
	return o, nil
}
