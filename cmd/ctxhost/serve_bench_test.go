package main

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"os"
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
	"github.com/ctxhost/ctxhost/internal/pacing"
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

// serveTurn is one agent turn through the Go client: a message appended
// and the context prepared, in two calls (Append, then Prepare: two store
// writes) or in one (Turn: one write).
type serveTurn struct {
	name string
	turn func(ctx context.Context, c *client.Client, id string, i int) error
}

var serveTurns = []serveTurn{
	{"calls=2", func(ctx context.Context, c *client.Client, id string, i int) error {
		if _, _, err := c.Append(ctx, id, client.WriteOptions{}, turnMessage(i)); err != nil {
			return err
		}
		_, err := c.Prepare(ctx, id, "")
		return err
	}},
	{"calls=1", func(ctx context.Context, c *client.Client, id string, i int) error {
		_, err := c.Turn(ctx, id, "", client.WriteOptions{}, turnMessage(i))
		return err
	}},
}

func turnMessage(i int) sdk.Message {
	return sdk.Message{Role: sdk.RoleUser, Content: fmt.Sprintf("turn %d: the parser drops the last token of line %d", i, i)}
}

// serveStores are the stores the many-session benchmarks run serve on.
var serveStores = []struct{ name, file string }{
	{"sqlite", "sessions.db"},
	{"filestore", "sessions/"},
}

// turnServer starts `ctxhost serve` (the plan plugin and the Gemini
// assembler as processes, info-level access log) on a store of the given
// kind, creates n sessions through a Go client over gRPC and plays one
// turn on each. It returns the client, the sessions and the serve process.
func turnServer(b *testing.B, storeFile string, n int, turn serveTurn) (*client.Client, []string, *served) {
	ctx := context.Background()
	dir := b.TempDir()
	srv := startServe(b, nil, "-config", writeServeConfig(b, dir, filepath.Join(dir, storeFile), ""))
	var h2 http.Protocols
	h2.SetUnencryptedHTTP2(true)
	c := client.New("http://"+srv.addr, client.Options{GRPC: true, PayloadCache: n,
		HTTPClient: &http.Client{Transport: &http.Transport{Protocols: &h2}}})
	ids := make([]string, n)
	var wg sync.WaitGroup
	sem := make(chan struct{}, 32)
	for k := range ids {
		ids[k] = fmt.Sprintf("turns-%d", k)
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer func() { <-sem; wg.Done() }()
			if _, err := c.CreateSession(ctx, ids[k], ""); err != nil {
				b.Error(err)
				return
			}
			if err := turn.turn(ctx, c, ids[k], 0); err != nil {
				b.Error(err)
			}
		}()
	}
	wg.Wait()
	return c, ids, srv
}

// turnFigures reports turns/s, the median and 99th percentile latency of
// lat (sorted here), and the CPU per turn of the serve process, of its
// plugin processes, and of this process (the client).
func turnFigures(b *testing.B, lat []time.Duration, elapsed time.Duration, cpu0 cpuSplit, pid int) {
	slices.Sort(lat)
	b.ReportMetric(float64(len(lat))/elapsed.Seconds(), "turns/s")
	b.ReportMetric(float64(lat[len(lat)/2].Microseconds())/1e3, "p50-ms")
	b.ReportMetric(float64(lat[len(lat)*99/100].Microseconds())/1e3, "p99-ms")
	cpu := readCPUSplit(pid)
	per := func(d time.Duration) float64 { return float64(d.Microseconds()) / 1e3 / float64(len(lat)) }
	if cpu.serve > 0 {
		b.ReportMetric(per(cpu.serve-cpu0.serve), "serve-cpu-ms/turn")
		b.ReportMetric(per(cpu.plugins-cpu0.plugins), "plugins-cpu-ms/turn")
	}
	if cpu.client > 0 {
		b.ReportMetric(per(cpu.client-cpu0.client), "client-cpu-ms/turn")
	}
}

// cpuSplit is CPU time used so far by the serve process, its plugin
// processes (its children) and this process.
type cpuSplit struct{ serve, plugins, client time.Duration }

func readCPUSplit(pid int) cpuSplit {
	out := cpuSplit{serve: processCPU(pid), client: processCPU(os.Getpid())}
	for _, child := range childPIDs(pid) {
		out.plugins += processCPU(child)
	}
	return out
}

// childPIDs lists the processes whose parent is pid (Linux; none
// elsewhere).
func childPIDs(pid int) []int {
	stats, _ := filepath.Glob("/proc/[0-9]*/stat")
	var out []int
	for _, st := range stats {
		data, err := os.ReadFile(st)
		if err != nil {
			continue
		}
		// pid (comm) state ppid ...: comm may hold spaces, so read after ')'.
		i := bytes.LastIndexByte(data, ')')
		if i < 0 {
			continue
		}
		var state string
		var ppid, self int
		if _, err := fmt.Sscan(string(data[i+1:]), &state, &ppid); err != nil || ppid != pid {
			continue
		}
		if _, err := fmt.Sscan(string(data), &self); err == nil {
			out = append(out, self)
		}
	}
	return out
}

// BenchmarkServeConcurrentTurns is BenchmarkConcurrentTurns (store/)
// through a real `ctxhost serve` (turnServer): agent turns on 1, 10 and
// 1,000 sessions at once, one goroutine each taking its next turn as soon
// as its last returned, in two calls or one (serveTurns), on SQLite and
// the file store. It reports turns/s, the median and 99th percentile of a
// turn's latency, and the CPU per turn of serve, its plugins and the
// client (turnFigures).
//
//	go test -run '^$' -bench ServeConcurrentTurns -benchtime 4000x ./cmd/ctxhost/
func BenchmarkServeConcurrentTurns(b *testing.B) {
	ctx := context.Background()
	for _, st := range serveStores {
		for _, n := range []int{1, 10, 1000} {
			for _, kind := range serveTurns {
				b.Run(fmt.Sprintf("%s/sessions=%d/%s", st.name, n, kind.name), func(b *testing.B) {
					c, ids, srv := turnServer(b, st.file, n, kind)
					if b.Failed() {
						return
					}
					cpu0 := readCPUSplit(srv.cmd.Process.Pid)
					b.ResetTimer()
					lat, elapsed, err := pacing.Closed(len(ids), b.N, func(k, i int) error { return kind.turn(ctx, c, ids[k], i+1) })
					b.StopTimer()
					if err != nil {
						b.Error(err)
					}
					turnFigures(b, lat, elapsed, cpu0, srv.cmd.Process.Pid)
				})
			}
		}
	}
}

// BenchmarkServePacedTurns is BenchmarkPacedTurns (store/) through a real
// `ctxhost serve` (turnServer): 1,000 sessions, each an agent that takes a
// turn at its own phase, 2,200 turns/s offered in all (10 % above the
// 2,000 to serve, so that the served rate, which counts the last turns'
// latency, can show it), a turn being a message appended and the context
// prepared through the Go client over gRPC, in two calls or one
// (serveTurns), on SQLite and the file store. It reports the turns/s
// served, the median and 99th percentile of a turn's latency counted from
// when it was due, and the CPU per turn of serve, its plugins and the
// client (turnFigures). b.N is rounded up to whole rounds of the sessions.
//
//	go test -run '^$' -bench ServePacedTurns -benchtime 11000x ./cmd/ctxhost/
func BenchmarkServePacedTurns(b *testing.B) {
	const sessionsN, offered = 1000, 2200
	perSession := time.Second * sessionsN / offered
	ctx := context.Background()
	for _, st := range serveStores {
		for _, kind := range serveTurns {
			b.Run(st.name+"/"+kind.name, func(b *testing.B) {
				c, ids, srv := turnServer(b, st.file, sessionsN, kind)
				if b.Failed() {
					return
				}
				rounds := max(1, (b.N+sessionsN-1)/sessionsN)
				cpu0 := readCPUSplit(srv.cmd.Process.Pid)
				b.ResetTimer()
				lat, elapsed, err := pacing.Run(sessionsN, rounds, perSession, func(k, r int) error { return kind.turn(ctx, c, ids[k], r+1) })
				b.StopTimer()
				if err != nil {
					b.Fatal(err)
				}
				turnFigures(b, lat, elapsed, cpu0, srv.cmd.Process.Pid)
			})
		}
	}
}
