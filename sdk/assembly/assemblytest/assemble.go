package assemblytest

import (
	"context"
	"testing"

	"github.com/ctxhost/ctxhost/sdk"
)

// Assemble assembles req in format with a, twice, and fails the test when
// either call fails or the two payloads differ (assembly must be
// deterministic). The result's payload is whole: a PayloadHead is joined
// to it.
func Assemble(t testing.TB, a sdk.Assembler, req sdk.AssembleRequest, format string) sdk.AssembleResult {
	t.Helper()
	req.Format = format
	res, err := a.Assemble(context.Background(), req)
	if err != nil {
		t.Fatalf("Assemble(%s): %v", format, err)
	}
	again, err := a.Assemble(context.Background(), req)
	if err != nil || string(again.Whole()) != string(res.Whole()) {
		t.Fatalf("Assemble(%s) is not deterministic (err %v)", format, err)
	}
	res.Payload, res.PayloadHead = res.Whole(), nil
	return res
}
