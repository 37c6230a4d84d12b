//go:build chaos

package servicechaos

import (
	"bytes"
	"context"
	"fmt"
	"math/rand/v2"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/ctxhost/ctxhost/internal/pgtest"
)

// loadRun is concurrent appends against a server a killer restarts.
type loadRun struct {
	t   *testing.T
	cfg string

	mu    sync.Mutex
	srv   *server
	kills int
	peak  int64

	answers counts
	// acked: contents of each acknowledged append, by session; refused:
	// contents of the appends refused as invalid, by session.
	ackMu   sync.Mutex
	acked   map[string][][]string
	refused map[string][][]string
	odd     atomic.Int64 // answers no append should get
	turns   atomic.Int64 // acknowledged appends made by a turn (Prepare)
}

// serverErrors is the error lines of the running server's log so far,
// for a report of an answer the run did not expect.
func (r *loadRun) serverErrors() string {
	r.mu.Lock()
	log := r.srv.stderr.String()
	r.mu.Unlock()
	var out []string
	for _, line := range strings.Split(log, "\n") {
		if strings.Contains(line, "[ERROR]") {
			out = append(out, line)
		}
	}
	if len(out) == 0 {
		return ""
	}
	return "; the server logged:\n" + strings.Join(out[max(0, len(out)-5):], "\n")
}

func (r *loadRun) addr() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.srv.addr
}

// worker appends batches of 1 to 4 messages to session sid, each with its
// own idempotency key, one in ten with an invalid last message; a call cut
// off by a kill (or answered UNAVAILABLE) is sent again, with its key,
// until it gets an answer. Even workers append with AppendMessages, odd
// ones take a turn in one call (Prepare with the messages, one store
// write for both).
func (r *loadRun) worker(w int, sid string, until time.Time) {
	rng := rand.New(rand.NewPCG(uint64(w), 26))
	method := "AppendMessages"
	if w%2 == 1 {
		method = "Prepare"
	}
	for i := 0; time.Now().Before(until); i++ {
		n := 1 + rng.IntN(4)
		var msgs []map[string]any
		var contents []string
		for j := range n {
			c := fmt.Sprintf("w%d-i%d-j%d", w, i, j)
			contents = append(contents, c)
			msgs = append(msgs, map[string]any{"role": []string{"user", "assistant"}[j%2], "content": c})
		}
		invalid := rng.IntN(10) == 0
		if invalid {
			msgs = append(msgs, map[string]any{"role": "nobody", "content": fmt.Sprintf("w%d-i%d-bad", w, i)})
		}
		body := mustJSON(map[string]any{"sessionId": sid, "messages": msgs, "write": map[string]any{"idempotencyKey": fmt.Sprintf("k%d", i)}})
		giveUp := until.Add(time.Minute)
		for {
			a := call(r.addr(), method, body)
			code := a.code
			if a.err != nil {
				code = "transport"
			}
			r.answers.add(code)
			retry := a.err != nil || code == "unavailable" || code == "aborted" || code == "http-502" || code == "http-503"
			switch {
			case a.status == 200 && !invalid:
				if method == "Prepare" {
					r.turns.Add(1)
				}
				r.ackMu.Lock()
				r.acked[sid] = append(r.acked[sid], contents)
				r.ackMu.Unlock()
			case code == "invalid_argument" && invalid:
				r.ackMu.Lock()
				r.refused[sid] = append(r.refused[sid], contents)
				r.ackMu.Unlock()
			case retry && time.Now().Before(giveUp):
				time.Sleep(20 * time.Millisecond)
				continue
			default:
				r.odd.Add(1)
				r.t.Errorf("%s append %d: HTTP %d %s %v %s%s", sid, i, a.status, code, a.err, a.raw, r.serverErrors())
			}
			break
		}
	}
}

// killer kills the server with SIGKILL every 150 to 600 ms until the time
// is up, restarting it each time.
func (r *loadRun) killer(until time.Time) {
	rng := rand.New(rand.NewPCG(7, 26))
	for time.Now().Before(until) {
		time.Sleep(time.Duration(150+rng.IntN(450)) * time.Millisecond)
		r.mu.Lock()
		r.peak = max(r.peak, r.srv.peakRSS())
		r.srv.kill()
		r.kills++
		r.srv = startRetrying(r.t, r.cfg)
		r.mu.Unlock()
	}
}

// tally is what a load run counted.
type tally struct {
	acked, lost, duplicated, partial, extra int
}

// check reads every session back and counts lost, duplicated and partly
// applied messages.
func (r *loadRun) check(sessions []string) tally {
	var tl tally
	for _, sid := range sessions {
		hist, a := history(r.t, r.addr(), sid)
		if hist == nil {
			r.t.Fatalf("%s: ExportState: HTTP %d %s", sid, a.status, a.raw)
		}
		occurrences := func(c string) int { return bytes.Count(hist, []byte(`"`+c+`"`)) }
		stored := 0
		for _, batch := range r.acked[sid] {
			present := 0
			for _, c := range batch {
				n := occurrences(c)
				tl.acked++
				switch {
				case n == 0:
					tl.lost++
				case n > 1:
					tl.duplicated += n - 1
				}
				if n > 0 {
					present++
				}
				stored += n
			}
			if present > 0 && present < len(batch) {
				tl.partial++
			}
		}
		for _, batch := range r.refused[sid] {
			for _, c := range batch {
				if occurrences(c) > 0 {
					tl.partial++
					break
				}
			}
		}
		info := call(r.addr(), "GetSession", mustJSON(map[string]any{"sessionId": sid}))
		if n, _ := info.body["messages"].(float64); int(n) != stored {
			tl.extra += int(n) - stored
		}
	}
	return tl
}

// runLoad runs workers appending to their sessions for the configured
// time while the server is killed, then checks and reports.
func runLoad(t *testing.T, store string, during func(until time.Time)) *loadRun {
	var d func(*loadRun, time.Time)
	if during != nil {
		d = func(_ *loadRun, until time.Time) { during(until) }
	}
	return runLoadWith(t, store, loadOptions{kill: true, during: d})
}

// loadOptions says what disturbs a load run besides its clients.
type loadOptions struct {
	// kill: kill -9 the server every 150 to 600 ms, restarting it.
	kill bool
	// during runs beside the workers until the time is up.
	during func(r *loadRun, until time.Time)
	// seconds the run lasts (0: $CTXHOST_CHAOS_SECONDS, default 20).
	seconds int
}

// runLoadWith runs workers appending to their sessions for the configured
// time under what opts says, then kills the server (so that what is
// checked is what the store kept, not what the server held), restarts it,
// checks and reports.
func runLoadWith(t *testing.T, store string, opts loadOptions) *loadRun {
	seconds := opts.seconds
	if seconds == 0 {
		seconds = envInt("CTXHOST_CHAOS_SECONDS", 20)
	}
	workers := envInt("CTXHOST_CHAOS_WORKERS", 8)
	r := &loadRun{t: t, cfg: writeConfig(t, store, ""), acked: map[string][][]string{}, refused: map[string][][]string{}}
	r.srv = start(t, r.cfg)
	var sessions []string
	for w := range workers {
		sid := fmt.Sprintf("c%d", w)
		if a := call(r.addr(), "CreateSession", mustJSON(map[string]any{"sessionId": sid})); a.status != 200 {
			t.Fatalf("create %s: %d %s", sid, a.status, a.raw)
		}
		sessions = append(sessions, sid)
	}
	until := time.Now().Add(time.Duration(seconds) * time.Second)
	var wg sync.WaitGroup
	for w, sid := range sessions {
		wg.Add(1)
		go func() { defer wg.Done(); r.worker(w, sid, until) }()
	}
	if opts.during != nil {
		wg.Add(1)
		go func() { defer wg.Done(); opts.during(r, until) }()
	}
	if opts.kill {
		r.killer(until)
	}
	wg.Wait()
	r.mu.Lock()
	r.peak = max(r.peak, r.srv.peakRSS())
	r.srv.kill()
	r.srv = startRetrying(t, r.cfg)
	r.mu.Unlock()
	tl := r.check(sessions)
	internal := r.answers.get("internal") + r.answers.get("http-500")
	t.Logf("REPORT %s: %d kill -9, %d workers, %d s: %d messages acknowledged (%d calls of them turns); lost %d, duplicated %d, partially applied %d, extra %d; "+
		"internal answers %d; answers %v; server peak RSS %d MiB",
		t.Name(), r.kills, workers, seconds, tl.acked, r.turns.Load(), tl.lost, tl.duplicated, tl.partial, tl.extra, internal, r.answers.String(), r.peak>>20)
	if tl.lost+tl.duplicated+tl.partial+tl.extra+internal != 0 || r.odd.Load() != 0 {
		t.Errorf("lost %d, duplicated %d, partially applied %d, extra %d, internal %d, odd answers %d: want all 0",
			tl.lost, tl.duplicated, tl.partial, tl.extra, internal, r.odd.Load())
	}
	if r.peak > 256<<20 {
		t.Errorf("server peak RSS %d MiB, over 256 MiB", r.peak>>20)
	}
	return r
}

func TestKillUnderLoadSQLite(t *testing.T) {
	runLoad(t, "sqlite:"+t.TempDir()+"/ctxhost.db", nil)
}

// chaosPostgresURL is a schema of the test server of its own, its
// connections named so that this test can cut them (and no one else's).
func chaosPostgresURL(t *testing.T) (string, string) {
	u, err := url.Parse(pgtest.URL(t))
	if err != nil {
		t.Fatal(err)
	}
	app := fmt.Sprintf("ctxhost-chaos-%d", time.Now().UnixNano())
	q := u.Query()
	q.Set("application_name", app)
	u.RawQuery = q.Encode()
	return u.String(), app
}

// TestKillUnderLoadPostgres kills the server under load on PostgreSQL,
// and meanwhile cuts the server's database connections every 20 to 80 ms
// (pg_terminate_backend): a cut connection must answer UNAVAILABLE, never
// INTERNAL, and lose nothing.
func TestKillUnderLoadPostgres(t *testing.T) {
	u, app := chaosPostgresURL(t)
	var cuts atomic.Int64
	runLoad(t, u, func(until time.Time) {
		ctx := context.Background()
		conn, err := pgx.Connect(ctx, pgtest.ServerURL(t))
		if err != nil {
			t.Errorf("connect: %v", err)
			return
		}
		defer conn.Close(ctx)
		rng := rand.New(rand.NewPCG(3, 26))
		for time.Now().Before(until) {
			time.Sleep(time.Duration(20+rng.IntN(60)) * time.Millisecond)
			var n int64
			err := conn.QueryRow(ctx, `SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity WHERE application_name = $1`, app).Scan(&n)
			if err != nil {
				t.Errorf("cut connections: %v", err)
				return
			}
			cuts.Add(n)
		}
	})
	t.Logf("REPORT %s: %d PostgreSQL connections cut", t.Name(), cuts.Load())
}

// TestCreateThroughTwoServers: two servers on one PostgreSQL database
// create each session with one key, two calls each, at once: one call
// creates it, the other three are answered replayed.
func TestCreateThroughTwoServers(t *testing.T) {
	u, _ := chaosPostgresURL(t)
	cfg := writeConfig(t, u, "")
	servers := []*server{start(t, cfg), start(t, cfg)}
	var created, replayed, other atomic.Int64
	tries := envInt("CTXHOST_CHAOS_CREATES", 30)
	for n := range tries {
		var wg sync.WaitGroup
		for i := range 4 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				a := call(servers[i%2].addr, "CreateSession", mustJSON(map[string]any{"sessionId": fmt.Sprintf("k%d", n), "idempotencyKey": "create"}))
				switch {
				case a.status == 200 && a.body["replayed"] == true:
					replayed.Add(1)
				case a.status == 200:
					created.Add(1)
				default:
					other.Add(1)
					t.Errorf("create k%d: HTTP %d %s", n, a.status, a.raw)
				}
			}()
		}
		wg.Wait()
	}
	t.Logf("REPORT %s: %d sessions, 4 calls each over 2 servers: %d created, %d replayed, %d other answers",
		t.Name(), tries, created.Load(), replayed.Load(), other.Load())
	if created.Load() != int64(tries) || replayed.Load() != int64(3*tries) {
		t.Errorf("want %d created and %d replayed", tries, 3*tries)
	}
}
