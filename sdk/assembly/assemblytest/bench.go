package assemblytest

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/ctxhost/ctxhost/sdk"
	"github.com/ctxhost/ctxhost/tokenizer"
)

// BenchmarkAssemble assembles a ~100k-token request (LargeRequest) with a
// in each of formats, one sub-benchmark a format; compare with
// BenchmarkCountTokens, which counts the same request's text.
func BenchmarkAssemble(b *testing.B, a sdk.Assembler, formats ...string) {
	req := LargeRequest(b, 100_000)
	for _, format := range formats {
		b.Run(format, func(b *testing.B) {
			req.Format = format
			b.ReportAllocs()
			for b.Loop() {
				if _, err := a.Assemble(context.Background(), req); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkCountTokens counts the text of the ~100k-token request of
// BenchmarkAssemble with cl100k_base: the baseline an assembly should stay
// well under.
func BenchmarkCountTokens(b *testing.B) {
	text := RequestText(LargeRequest(b, 100_000))
	counter, err := tokenizer.Get("cl100k_base")
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(len(text)))
	for b.Loop() {
		counter.Count(text)
	}
}

// BenchmarkAppend times one assembly in format after one message is
// appended to a history of 100, 1,000, 10,000 and 50,000 short messages
// (the session's earlier turns assembled before, in the same stream, as
// a host sends them; the history is cut back, untimed, when the appended
// messages reach a tenth of it), and reports each size's time divided by
// that of the smallest (metric x-of-100). The requests carry
// ImmutableMessages, as the host's and sdk/serve's do: the history grows
// in place and is never changed. An assembler that encodes only what was
// appended, and answers the payload as an append-only PayloadHead and a
// rest, stays near 1; one that joins the whole payload each time does
// not (the time does not include joining a PayloadHead: sdk/serve answers
// a delta without doing so).
func BenchmarkAppend(b *testing.B, a sdk.Assembler, format string) {
	benchmarkAppend(b, a.Assemble, format, false)
}

// BenchmarkAppendLocal is BenchmarkAppend as a library caller runs the
// assembler in-process: through sdk.NewLocalAssembler, with ReusePayload
// (the caller is done with each payload by the next turn), the whole
// payload joined every turn.
func BenchmarkAppendLocal(b *testing.B, a sdk.Assembler, format string) {
	benchmarkAppend(b, sdk.NewLocalAssembler(a).Assemble, format, true)
}

func benchmarkAppend(b *testing.B, call func(context.Context, sdk.AssembleRequest) (sdk.AssembleResult, error), format string, reuse bool) {
	var base float64
	for _, n := range []int{100, 1000, 10000, 50000} {
		b.Run(fmt.Sprintf("messages=%d", n), func(b *testing.B) {
			limit := n + max(n/10, 10)
			msgs := make([]sdk.Message, 0, limit)
			for i := range n {
				msgs = append(msgs, growthMessage(i))
			}
			assemble := func() {
				req := turnRequest(fmt.Sprint("bench-", n), "", "You are a careful coding agent.", msgs[:len(msgs):len(msgs)], 1)
				req.Format, req.ImmutableMessages, req.ReusePayload = format, true, reuse
				res, err := call(context.Background(), req)
				if err != nil {
					b.Fatal(err)
				}
				if reuse && (len(res.PayloadHead) != 0 || len(res.Payload) == 0) {
					b.Fatal("a local assembler must answer the whole payload")
				}
			}
			assemble()
			var timed time.Duration
			turns := 0
			for b.Loop() {
				if len(msgs) == limit {
					b.StopTimer()
					msgs = append(make([]sdk.Message, 0, limit), msgs[:n]...) // a new array: the old one's messages stay as handed out
					assemble()
					b.StartTimer()
				}
				start := time.Now()
				msgs = append(msgs, growthMessage(len(msgs)))
				assemble()
				timed += time.Since(start)
				turns++
			}
			per := float64(timed.Nanoseconds()) / float64(turns)
			if n == 100 {
				base = per
			}
			if base > 0 {
				b.ReportMetric(per/base, "x-of-100")
			}
		})
	}
}

// growthMessage is the i-th message of BenchmarkAppend's history.
func growthMessage(i int) sdk.Message {
	role := sdk.RoleUser
	if i%2 == 1 {
		role = sdk.RoleAssistant
	}
	return sdk.Message{ID: fmt.Sprintf("m%d", i+1), Role: role, Content: fmt.Sprintf("message %d talks about the parser, the lexer and the tests", i)}
}
