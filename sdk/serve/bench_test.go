package serve

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/ctxhost/ctxhost/internal/wire/pb"
	"github.com/ctxhost/ctxhost/sdk"
	"github.com/ctxhost/ctxhost/sdk/assembly"
	"github.com/hashicorp/go-hclog"
)

type fixedPlugin struct{ text string }

func (f fixedPlugin) Describe() sdk.PluginInfo      { return sdk.PluginInfo{Name: "fixed"} }
func (f fixedPlugin) NewSession(string) sdk.Session { return fixedSession(f) }

type fixedSession struct{ text string }

func (s fixedSession) Component(context.Context, string) (*sdk.Component, error) {
	return &sdk.Component{Name: "fixed", Slot: sdk.SlotContext, Text: s.text}, nil
}
func (s fixedSession) Apply(context.Context, string, json.RawMessage) (json.RawMessage, error) {
	return nil, nil
}

// BenchmarkServerComponent measures what the SDK adds to one Component RPC
// in the plugin process: session lookup, the call, and conversion to pb.
func BenchmarkServerComponent(b *testing.B) {
	srv := &contextServer{local: sdk.NewLocalPlugin(fixedPlugin{text: strings.Repeat("x", 1024)}), log: hclog.NewNullLogger()}
	req := &pb.ComponentRequest{SessionId: "s", Encoding: "cl100k_base"}
	ctx := context.Background()
	for b.Loop() {
		if _, err := srv.Component(ctx, req); err != nil {
			b.Fatal(err)
		}
	}
}

// appendAssembler joins its history's contents as a JSON-ish list, the
// way the provider assemblers build an api payload: fragments derived
// once per stream (assembly.MessageCache) and joined into an append-only
// head (assembly.HeadCache).
type appendAssembler struct {
	frags *assembly.MessageCache[[]byte]
	heads *assembly.HeadCache[[]byte, int]
}

func newAppendAssembler() *appendAssembler {
	return &appendAssembler{
		frags: assembly.NewMessageCache[[]byte](0),
		heads: assembly.NewHeadCache(0, func(b []byte, n *int, _ int, f []byte) []byte {
			if *n > 0 {
				b = append(b, ',')
			}
			*n++
			return append(b, f...)
		}),
	}
}

func (a *appendAssembler) Describe() sdk.AssemblerInfo {
	return sdk.AssemblerInfo{Name: "append", Formats: []sdk.FormatInfo{{Name: "api", MediaType: "application/json"}}}
}
func (a *appendAssembler) ReadsRequestOnly() {}
func (a *appendAssembler) Assemble(_ context.Context, req sdk.AssembleRequest) (sdk.AssembleResult, error) {
	p := assembly.Split(req)
	frags := a.frags.Derive(req, p.History, func(_ int, m sdk.Message, _ *assembly.MessageContext) []byte {
		return strconv.AppendQuote(nil, m.Content)
	})
	head, _ := a.heads.Head(req, []byte(`{"system":`+strconv.Quote(p.System)+`,"messages":[`), 0, frags)
	return sdk.AssembleResult{PayloadHead: head, Payload: []byte(`]}`)}, nil
}

// BenchmarkAssembleDeltaAppend measures what the assembler process does
// for a turn that appends one message to a history of 100 or 50,000 —
// the delta rebuilt on the kept base, the assembly (an assembler built on
// MessageCache and HeadCache) and the answer after the last payload —
// and reports each size's time divided by that of the smallest (metric
// x-of-100): near 1 when the process does O(k) work for k messages.
func BenchmarkAssembleDeltaAppend(b *testing.B) {
	var base float64
	for _, n := range []int{100, 50000} {
		b.Run(fmt.Sprintf("messages=%d", n), func(b *testing.B) {
			srv := &assemblerServer{local: sdk.NewLocalAssembler(newAppendAssembler()), log: hclog.NewNullLogger(), bases: newBases(4)}
			ctx := context.Background()
			msg := func(i int) *pb.Message {
				return &pb.Message{Role: sdk.RoleUser, Content: fmt.Sprintf("message %d talks about the parser, the lexer and the tests", i)}
			}
			version, appended := uint64(0), 0
			whole := func() {
				msgs := make([]*pb.Message, n)
				for i := range msgs {
					msgs[i] = msg(i)
				}
				version++
				if _, err := srv.Assemble(ctx, &pb.AssembleRequest{BaseId: "s", Version: version, Format: "api", Components: []*pb.Component{
					{Name: sdk.ComponentSystemPrompt, Slot: string(sdk.SlotSystem), Content: &pb.Component_Text{Text: "Be brief."}},
					{Name: sdk.ComponentHistory, Slot: string(sdk.SlotHistory), Content: &pb.Component_Messages{Messages: &pb.MessageList{Messages: msgs}}},
				}}); err != nil {
					b.Fatal(err)
				}
				appended = 0
			}
			whole()
			var timed time.Duration
			turns := 0
			for b.Loop() {
				if appended == max(n/10, 10) {
					b.StopTimer()
					whole()
					b.StartTimer()
				}
				version++
				req := &pb.AssembleRequest{BaseId: "s", Version: version, Format: "api", Delta: &pb.AssembleDelta{BaseVersion: version - 1,
					Components: []*pb.ComponentChange{{Change: &pb.ComponentChange_Same{Same: 0}},
						{Change: &pb.ComponentChange_Appended{Appended: &pb.AppendedMessages{Base: 1, Messages: []*pb.Message{msg(n + appended)}}}}}}}
				start := time.Now()
				res, err := srv.Assemble(ctx, req)
				timed += time.Since(start)
				if err != nil || res.PayloadPrefix == 0 {
					b.Fatalf("a delta answered from %d: %v", res.GetPayloadPrefix(), err)
				}
				appended++
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
