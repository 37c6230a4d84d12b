package main

import (
	"context"
	"fmt"
	"net/http"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"connectrpc.com/connect"
	"github.com/hashicorp/go-hclog"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"

	"github.com/ctxhost/ctxhost/api/servicev1"
	"github.com/ctxhost/ctxhost/api/servicev1/servicev1connect"
	"github.com/ctxhost/ctxhost/client"
	"github.com/ctxhost/ctxhost/config"
	"github.com/ctxhost/ctxhost/engine"
	"github.com/ctxhost/ctxhost/sdk"
)

// BenchmarkServeSteadyTurn: the steady turn (Prepare of an unchanged
// 200-message session; the plan plugin and the Gemini assembler as
// processes; a SQLite store; info-level access log to a pipe) as an agent
// in another process sees it: a real `ctxhost serve` process, beside the
// same turn on an engine in this process and an empty loopback round trip
// (Health) to the server. (service - in-process) / round trip is what the
// service adds, in round trips. "prepare" carries the whole payload in
// every answer; "prepare-known" names the payload held, as the clients
// do, and gets an unchanged one left out.
//
// Each protocol runs on the transport its clients use: "connect" (binary
// protobuf, the Go client package's default) and "connect-json" (the
// Python client, curl) over HTTP/1.1, "grpc" over HTTP/2 (h2c), as every
// gRPC client speaks it.
func BenchmarkServeSteadyTurn(b *testing.B) {
	ctx := context.Background()
	var inProcess time.Duration // the in-process turn
	dir := b.TempDir()
	cfgPath := writeServeConfig(b, dir, filepath.Join(dir, "sessions.db"), "")
	text := func(i int) string { return fmt.Sprintf("turn %d: please look at file %d and report", i, i%7) }

	cfg, diags := config.Load([]string{cfgPath}, map[string]string{}, nil)
	if diags.HasErrors() {
		b.Fatal(diags)
	}
	cfg.Host.Store = filepath.Join(b.TempDir(), "inproc.db")
	e, err := engine.Start(ctx, cfg, engine.Options{Logger: hclog.NewNullLogger()})
	if err != nil {
		b.Fatal(err)
	}
	defer e.Close()
	local, err := e.NewSession("steady")
	if err != nil {
		b.Fatal(err)
	}
	for i := range 200 {
		if _, err := local.AddMessage(sdk.Message{Role: sdk.RoleUser, Content: text(i)}); err != nil {
			b.Fatal(err)
		}
	}
	b.Run("in-process", func(b *testing.B) {
		start := time.Now()
		for b.Loop() {
			if _, err := local.Prepare(ctx, ""); err != nil {
				b.Fatal(err)
			}
		}
		inProcess = time.Since(start) / time.Duration(b.N)
	})
	srv := startServe(b, nil, "-config", cfgPath).addr
	var h1, h2 http.Protocols
	h1.SetHTTP1(true)
	h2.SetUnencryptedHTTP2(true)
	for _, kind := range []struct {
		name  string
		proto *http.Protocols
		opts  []connect.ClientOption
	}{
		{"connect", &h1, nil},
		{"connect-json", &h1, []connect.ClientOption{connect.WithCodec(paddingJSON{})}},
		{"grpc", &h2, []connect.ClientOption{connect.WithGRPC()}},
	} {
		hc := &http.Client{Transport: &http.Transport{Protocols: kind.proto}}
		c := servicev1connect.NewContextServiceClient(hc, "http://"+srv, kind.opts...)
		id := "steady-" + kind.name
		if _, err := c.CreateSession(ctx, connect.NewRequest(&servicev1.CreateSessionRequest{SessionId: id})); err != nil {
			b.Fatal(err)
		}
		for i := range 200 {
			if _, err := c.AppendMessages(ctx, connect.NewRequest(&servicev1.AppendMessagesRequest{SessionId: id,
				Messages: []*servicev1.Message{{Role: "user", Content: text(i)}}})); err != nil {
				b.Fatal(err)
			}
		}
		b.Run(kind.name+"/prepare", func(b *testing.B) {
			for b.Loop() {
				if _, err := c.Prepare(ctx, connect.NewRequest(&servicev1.PrepareRequest{SessionId: id})); err != nil {
					b.Fatal(err)
				}
			}
		})
		// As the clients call it: naming the payload they hold, which the
		// service leaves out when it is unchanged.
		b.Run(kind.name+"/prepare-known", func(b *testing.B) {
			known := ""
			for b.Loop() {
				res, err := c.Prepare(ctx, connect.NewRequest(&servicev1.PrepareRequest{SessionId: id, KnownPayloadTag: known}))
				if err != nil {
					b.Fatal(err)
				}
				known = res.Msg.PayloadTag
			}
		})
		// Interleaved, so that the machine's load weighs on all alike: an
		// empty round trip, the steady turn as the clients call it, then
		// the same turn on the engine in this process. rt-added is (turn -
		// in-process turn in its own loop) / round trip; rt-added-cold
		// takes the in-process turn from this loop instead, where, like the
		// server's, it runs between network calls rather than in a warm
		// loop of its own.
		//
		// rt-added-sized takes as its round trip a Health call whose request
		// is as large as the Prepare request (an unknown field, which the
		// service ignores): over HTTP/1.1 a request with a body costs
		// more than an empty one, whatever the service does with it.
		sized := sizedHealth(&servicev1.PrepareRequest{SessionId: id, KnownPayloadTag: strings.Repeat("0", 32)})
		b.Run(kind.name+"/interleaved", func(b *testing.B) {
			var rt, rtSized, turn, cold time.Duration
			known := ""
			for b.Loop() {
				ts := time.Now()
				if _, err := c.Health(ctx, connect.NewRequest(sized)); err != nil {
					b.Fatal(err)
				}
				t0 := time.Now()
				if _, err := c.Health(ctx, connect.NewRequest(&servicev1.HealthRequest{})); err != nil {
					b.Fatal(err)
				}
				t1 := time.Now()
				rtSized += t0.Sub(ts)
				res, err := c.Prepare(ctx, connect.NewRequest(&servicev1.PrepareRequest{SessionId: id, KnownPayloadTag: known}))
				if err != nil {
					b.Fatal(err)
				}
				t2 := time.Now()
				if _, err := local.Prepare(ctx, ""); err != nil {
					b.Fatal(err)
				}
				known = res.Msg.PayloadTag
				rt, turn, cold = rt+t1.Sub(t0), turn+t2.Sub(t1), cold+time.Since(t2)
			}
			n := time.Duration(b.N)
			b.ReportMetric(float64(rt/n), "rt-ns")
			b.ReportMetric(float64(turn/n), "turn-ns")
			b.ReportMetric(float64(cold/n), "local-ns")
			if inProcess > 0 {
				b.ReportMetric(float64(turn/n-inProcess)/float64(rt/n), "rt-added")
			}
			b.ReportMetric(float64(turn/n-cold/n)/float64(rt/n), "rt-added-cold")
			b.ReportMetric(float64(rtSized/n), "rt-sized-ns")
			if inProcess > 0 {
				b.ReportMetric(float64(turn/n-inProcess)/float64(rtSized/n), "rt-added-sized")
			}
		})
		b.Run(kind.name+"/roundtrip", func(b *testing.B) {
			for b.Loop() {
				if _, err := c.Health(ctx, connect.NewRequest(&servicev1.HealthRequest{})); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// sizedHealth is a Health request as large as like, in the binary
// encoding and in JSON (paddingJSON), by an unknown field the service
// ignores.
func sizedHealth(like *servicev1.PrepareRequest) *servicev1.HealthRequest {
	r := &servicev1.HealthRequest{}
	var pad []byte
	for n := 0; len(pad) < proto.Size(like); n++ {
		pad = protowire.AppendBytes(protowire.AppendTag(nil, 1000, protowire.BytesType), make([]byte, n))
	}
	r.ProtoReflect().SetUnknown(pad)
	js, _ := protojson.Marshal(like)
	sizedJSON.Store(int64(len(js)))
	return r
}

// sizedJSON is the length of the JSON Prepare request sizedHealth
// matches.
var sizedJSON atomic.Int64

// paddingJSON is Connect's JSON codec, but for a Health request carrying
// an unknown field (sizedHealth), which it writes as {"padding":"x…"}
// as long as the JSON Prepare request.
type paddingJSON struct{}

func (paddingJSON) Name() string { return "json" }

func (paddingJSON) Marshal(m any) ([]byte, error) {
	if h, ok := m.(*servicev1.HealthRequest); ok && len(h.ProtoReflect().GetUnknown()) > 0 {
		const frame = len(`{"padding":""}`)
		return []byte(`{"padding":"` + strings.Repeat("x", max(int(sizedJSON.Load())-frame, 0)) + `"}`), nil
	}
	return protojson.Marshal(m.(proto.Message))
}

func (paddingJSON) Unmarshal(b []byte, m any) error {
	return protojson.UnmarshalOptions{DiscardUnknown: true}.Unmarshal(b, m.(proto.Message))
}

// BenchmarkServePacedTurns is BenchmarkPacedTurns (store/) through a real
// `ctxhost serve` (the plan plugin and the Gemini assembler as processes,
// a SQLite store, info-level access log): 1,000 sessions, each an agent
// that takes a turn every half second at its own phase (2,000 turns/s
// offered), a turn being a message appended and the context prepared
// through the Go client over gRPC, both durable. It reports the turns/s
// served, the median and 99th percentile of a turn's latency counted from
// when it was due, and the serve process's CPU per turn (Linux). b.N is
// rounded up to whole rounds of the sessions.
//
//	go test -run '^$' -bench ServePacedTurns -benchtime 10000x ./cmd/ctxhost/
func BenchmarkServePacedTurns(b *testing.B) {
	const sessionsN, perSession = 1000, 500 * time.Millisecond
	ctx := context.Background()
	dir := b.TempDir()
	srv := startServe(b, nil, "-config", writeServeConfig(b, dir, filepath.Join(dir, "sessions.db"), ""))
	var h2 http.Protocols
	h2.SetUnencryptedHTTP2(true)
	c := client.New("http://"+srv.addr, client.Options{GRPC: true, PayloadCache: sessionsN,
		HTTPClient: &http.Client{Transport: &http.Transport{Protocols: &h2}}})
	turn := func(id string, i int) error {
		msg := sdk.Message{Role: sdk.RoleUser, Content: fmt.Sprintf("turn %d: the parser drops the last token of line %d", i, i)}
		if _, _, err := c.Append(ctx, id, client.WriteOptions{}, msg); err != nil {
			return err
		}
		_, err := c.Prepare(ctx, id, "")
		return err
	}
	ids := make([]string, sessionsN)
	var wg sync.WaitGroup
	sem := make(chan struct{}, 32)
	for k := range ids {
		ids[k] = fmt.Sprintf("paced-%d", k)
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer func() { <-sem; wg.Done() }()
			if _, err := c.CreateSession(ctx, ids[k], ""); err != nil {
				b.Error(err)
				return
			}
			if err := turn(ids[k], 0); err != nil {
				b.Error(err)
			}
		}()
	}
	wg.Wait()
	if b.Failed() {
		return
	}
	rounds := max(1, (b.N+sessionsN-1)/sessionsN)
	lat := make([]time.Duration, rounds*sessionsN)
	pid := srv.cmd.Process.Pid
	cpu0 := processCPU(pid)
	b.ResetTimer()
	start := time.Now()
	for k, id := range ids {
		wg.Add(1)
		go func() {
			defer wg.Done()
			due := start.Add(perSession * time.Duration(k) / sessionsN)
			for r := range rounds {
				time.Sleep(time.Until(due))
				if err := turn(id, r+1); err != nil {
					b.Error(err)
					return
				}
				lat[r*sessionsN+k] = time.Since(due)
				due = due.Add(perSession)
			}
		}()
	}
	wg.Wait()
	elapsed := time.Since(start)
	b.StopTimer()
	slices.Sort(lat)
	b.ReportMetric(float64(len(lat))/elapsed.Seconds(), "turns/s")
	b.ReportMetric(float64(lat[len(lat)/2].Microseconds())/1e3, "p50-ms")
	b.ReportMetric(float64(lat[len(lat)*99/100].Microseconds())/1e3, "p99-ms")
	if cpu := processCPU(pid) - cpu0; cpu > 0 {
		b.ReportMetric(float64(cpu.Microseconds())/1e3/float64(len(lat)), "serve-cpu-ms/turn")
	}
}
