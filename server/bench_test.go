package server

import (
	"context"
	"fmt"
	"net/http"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	"connectrpc.com/connect"
	"google.golang.org/protobuf/proto"

	"github.com/ctxhost/ctxhost/api/servicev1"
	"github.com/ctxhost/ctxhost/internal/pgtest"
	"github.com/ctxhost/ctxhost/record"
	"github.com/ctxhost/ctxhost/store/postgres"
	"github.com/ctxhost/ctxhost/store/sqlite"
)

// benchRun numbers the sessions of benchmark runs (-count > 1 runs a
// benchmark again on the same server).
var benchRun atomic.Int64

// BenchmarkSteadyTurnService: an unchanged turn (Prepare only, 200
// messages in the session) in-process and over the service, beside one
// empty loopback round trip (Health) on each protocol, all in one run:
// (service - in-process) / round trip is what the service adds, in round
// trips. "prepare" carries the whole payload in every answer;
// "prepare-known" names the payload held, as the clients do, and gets it
// left out. Each protocol runs on its clients' transport: Connect (binary
// and JSON) over HTTP/1.1, gRPC over HTTP/2.
func BenchmarkSteadyTurnService(b *testing.B) {
	ctx := context.Background()
	s := newTestServer(b, b.TempDir())
	fill := func(add func(i int) error) {
		for i := range 200 {
			if err := add(i); err != nil {
				b.Fatal(err)
			}
		}
	}
	text := func(i int) string { return fmt.Sprintf("turn %d: please look at file %d and report", i, i%7) }
	b.Run("in-process", func(b *testing.B) {
		es, err := s.engines["first"].NewSession(fmt.Sprint("steady-inproc-", benchRun.Add(1)))
		if err != nil {
			b.Fatal(err)
		}
		fill(func(i int) error {
			_, err := es.AddMessage(toMessage(&servicev1.Message{Role: "user", Content: text(i)}))
			return err
		})
		for b.Loop() {
			if _, err := es.Prepare(ctx, ""); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("handler", func(b *testing.B) {
		id := fmt.Sprint("steady-handler-", benchRun.Add(1))
		if _, err := s.CreateSession(ctx, req(&servicev1.CreateSessionRequest{SessionId: id})); err != nil {
			b.Fatal(err)
		}
		fill(func(i int) error {
			_, err := s.AppendMessages(ctx, req(&servicev1.AppendMessagesRequest{SessionId: id, Messages: []*servicev1.Message{{Role: "user", Content: text(i)}}}))
			return err
		})
		for b.Loop() {
			if _, err := s.Prepare(ctx, req(&servicev1.PrepareRequest{SessionId: id})); err != nil {
				b.Fatal(err)
			}
		}
	})
	var h1, h2 http.Protocols
	h1.SetHTTP1(true)
	h2.SetUnencryptedHTTP2(true)
	for _, kind := range []struct {
		name  string
		proto *http.Protocols
		opts  []connect.ClientOption
	}{
		{"connect", &h1, nil},
		{"connect-json", &h1, []connect.ClientOption{connect.WithProtoJSON()}},
		{"grpc", &h2, []connect.ClientOption{connect.WithGRPC()}},
	} {
		c := clientOver(b, s, kind.proto, kind.opts...)
		id := fmt.Sprint("steady-", kind.name, "-", benchRun.Add(1))
		if _, err := c.CreateSession(ctx, req(&servicev1.CreateSessionRequest{SessionId: id})); err != nil {
			b.Fatal(err)
		}
		fill(func(i int) error {
			_, err := c.AppendMessages(ctx, req(&servicev1.AppendMessagesRequest{SessionId: id, Messages: []*servicev1.Message{{Role: "user", Content: text(i)}}}))
			return err
		})
		b.Run(kind.name+"/prepare", func(b *testing.B) {
			var size int
			for b.Loop() {
				res, err := c.Prepare(ctx, req(&servicev1.PrepareRequest{SessionId: id}))
				if err != nil {
					b.Fatal(err)
				}
				size = proto.Size(res.Msg)
			}
			b.ReportMetric(float64(size), "response-bytes")
		})
		// As the clients call it: naming the payload they hold, which the
		// service then leaves out.
		b.Run(kind.name+"/prepare-known", func(b *testing.B) {
			var size int
			known := ""
			for b.Loop() {
				res, err := c.Prepare(ctx, req(&servicev1.PrepareRequest{SessionId: id, KnownPayloadTag: known}))
				if err != nil {
					b.Fatal(err)
				}
				known, size = res.Msg.PayloadTag, proto.Size(res.Msg)
			}
			b.ReportMetric(float64(size), "response-bytes")
		})
		b.Run(kind.name+"/roundtrip", func(b *testing.B) {
			for b.Loop() {
				if _, err := c.Health(ctx, req(&servicev1.HealthRequest{})); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkAppendService: appends of one message each over gRPC, one
// client after another, on a SQLite file and on PostgreSQL (every append
// durable before it is answered); reports appends/s.
func BenchmarkAppendService(b *testing.B) {
	ctx := context.Background()
	stores := []struct {
		name string
		open func(b *testing.B) record.Store
	}{
		{"sqlite", func(b *testing.B) record.Store {
			st, err := sqlite.New(filepath.Join(b.TempDir(), "s.db"))
			if err != nil {
				b.Fatal(err)
			}
			b.Cleanup(func() { st.Close() })
			return st
		}},
		{"postgres", func(b *testing.B) record.Store {
			st, err := postgres.New(ctx, pgtest.URL(b))
			if err != nil {
				b.Fatal(err)
			}
			b.Cleanup(func() { st.Close() })
			return st
		}},
	}
	for _, sc := range stores {
		b.Run(sc.name, func(b *testing.B) {
			s := newTestServerOn(b, b.TempDir(), sc.open(b))
			c := client(b, s, connect.WithGRPC())
			id := "append-" + sc.name
			if _, err := c.CreateSession(ctx, req(&servicev1.CreateSessionRequest{SessionId: id})); err != nil {
				b.Fatal(err)
			}
			i := 0
			start := time.Now()
			for b.Loop() {
				i++
				if _, err := c.AppendMessages(ctx, req(&servicev1.AppendMessagesRequest{SessionId: id,
					Messages: []*servicev1.Message{{Role: "user", Content: fmt.Sprintf("observation %d: 12 tests passed, 1 failed", i)}}})); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(i)/time.Since(start).Seconds(), "appends/s")
		})
	}
}
