package storetest

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"

	"github.com/ctxhost/ctxhost/record"
)

// childEnv marks a child process of Crash or RaceProcesses; its value is
// the child's part: "crash", or "race <tag>".
const childEnv = "CTXHOST_STORETEST_CHILD"

// Crash parameters: writers appending at once, the acknowledged appends
// after which the child is killed, and an upper bound on the appends of
// a child nobody kills.
const (
	crashWriters   = 4
	crashKillAfter = 400
	crashMaxWrites = 1_000_000
)

// InChild reports whether this process is a child that Crash or
// RaceProcesses started; the test must then open the Store as told by the
// environment it was given and call Child with it.
func InChild() bool { return os.Getenv(childEnv) != "" }

// Child does the part of the child process (see InChild) on st; the test
// should return when it does.
func Child(st record.Store) {
	role := os.Getenv(childEnv)
	if tag, ok := strings.CutPrefix(role, "race "); ok {
		raceChild(st, tag)
		return
	}
	if role == "fork" {
		forkChild(st)
		return
	}
	crashChild(st)
}

// child returns the command that runs the calling top-level test again as
// a child process with role and env.
func child(t *testing.T, role string, env []string) *exec.Cmd {
	if strings.Contains(t.Name(), "/") {
		t.Fatalf("storetest: the child-process tests must be called from a top-level test, not %s", t.Name())
	}
	cmd := exec.Command(os.Args[0], "-test.run=^"+t.Name()+"$", "-test.count=1", "-test.v=false")
	cmd.Env = append(append(os.Environ(), env...), childEnv+"="+role)
	return cmd
}

// Crash checks that acknowledged writes survive the writer's sudden death:
// it runs the calling test again in a child process (with env added to its
// environment, to tell it where the backend is), which appends events to
// a few sessions as fast as it can and prints every acknowledged version;
// after crashKillAfter acknowledgements the child is killed with SIGKILL,
// most likely in the middle of a write. Then a Store from open must hold,
// for every session, each acknowledged version, with the bytes written,
// and nothing else but possibly the one write in flight: no gap, no
// duplicate, no damage.
//
// The calling test must be a top-level test; in the child (InChild), it
// opens the Store and calls Child instead.
//
// On a record.FeedStore the child writes each append with one feed event
// (AppendNoted), and the feed must then hold exactly one event for each
// version the session holds, in order, and none for a version it does
// not: the event and the change are one write.
func Crash(t *testing.T, env []string, open Opener) {
	var feedStart uint64
	if f, ok := record.AsFeed(open(t)); ok {
		h, err := f.FeedHead(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		feedStart = h
	}
	cmd := child(t, "crash", env)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	acked := map[string]uint64{} // session: last acknowledged version
	sc := bufio.NewScanner(out)
	n := 0
	for n < crashKillAfter && sc.Scan() {
		line := sc.Text()
		sid, vs, ok := strings.Cut(line, " ")
		v, err := strconv.ParseUint(vs, 10, 64)
		if !ok || err != nil || !strings.HasPrefix(sid, "crash-") {
			continue // not ours (test framework output)
		}
		if v != acked[sid]+1 && acked[sid] != 0 {
			t.Errorf("child acknowledged %s version %d after %d", sid, v, acked[sid])
		}
		acked[sid] = v
		n++
	}
	if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatalf("kill the child: %v", err)
	}
	for sc.Scan() { // acknowledgements printed before the kill
		if sid, vs, ok := strings.Cut(sc.Text(), " "); ok && strings.HasPrefix(sid, "crash-") {
			if v, err := strconv.ParseUint(vs, 10, 64); err == nil {
				acked[sid] = v
			}
		}
	}
	werr := cmd.Wait()
	if n < crashKillAfter {
		t.Fatalf("the child stopped after %d acknowledged appends (%v):\n%s", n, werr, stderr.String())
	}
	if ws, ok := cmd.ProcessState.Sys().(syscall.WaitStatus); !ok || !ws.Signaled() || ws.Signal() != syscall.SIGKILL {
		t.Fatalf("the child ended before it was killed (%v):\n%s", werr, stderr.String())
	}
	st := open(t)
	for w := 0; w < crashWriters; w++ {
		sid := crashSession(w)
		got, err := st.Load(t.Context(), sid)
		if err != nil {
			t.Errorf("%s: %v", sid, err)
			continue
		}
		a := acked[sid]
		if got.Version() < a || got.Version() > a+1 {
			t.Errorf("%s: stored version %d; the child acknowledged %d (at most one more may have been in flight)", sid, got.Version(), a)
		}
		if got.SnapshotVersion != 1 || !bytes.Equal(got.Snapshot, []byte(sid)) {
			t.Errorf("%s: snapshot version %d %s", sid, got.SnapshotVersion, short(got.Snapshot))
		}
		for i, ev := range got.Events {
			if v := got.SnapshotVersion + uint64(i) + 1; !bytes.Equal(ev, crashEvent(sid, v)) {
				t.Errorf("%s: version %d holds %s, want %s", sid, v, short(ev), short(crashEvent(sid, v)))
			}
		}
		// The store still works: the session goes on from where it is.
		if err := st.Append(t.Context(), sid, got.Version(), crashEvent(sid, got.Version()+1)); err != nil {
			t.Errorf("%s: append after the crash: %v", sid, err)
		}
	}
	if f, ok := record.AsFeed(st); ok {
		checkCrashFeed(t, f, feedStart)
	}
	t.Logf("killed the writer after %d acknowledged appends over %d sessions", n, crashWriters)
}

// checkCrashFeed checks Crash's feed: for each session, one event per
// stored version from 2 on, in order, with the child's data.
func checkCrashFeed(t *testing.T, f record.FeedStore, after uint64) {
	next := map[string]uint64{}
	for _, ev := range feedAfter(t, f, after) {
		if ev.Kind != "crash" {
			continue
		}
		if next[ev.Session] == 0 {
			next[ev.Session] = 2
		}
		if want := next[ev.Session]; ev.Version != want || string(ev.Data) != fmt.Sprint(ev.Session, " ", want) {
			t.Errorf("feed event %d: %s version %d %q, want version %d", ev.Sequence, ev.Session, ev.Version, ev.Data, want)
		}
		next[ev.Session] = ev.Version + 1
	}
	for w := 0; w < crashWriters; w++ {
		sid := crashSession(w)
		v, err := record.StoredVersionOf(t.Context(), f, sid)
		if err != nil {
			t.Fatal(err)
		}
		// The append after the crash (above) wrote no event.
		if got := next[sid] - 1; got != v-1 {
			t.Errorf("%s: the feed's last event is of version %d, the session's last change before the crash is %d", sid, got, v-1)
		}
	}
}

// crashChild is the child's part of Crash: it appends to crashWriters
// sessions at once, printing "<session> <version>" for each acknowledged
// write, until it is killed. It never returns.
func crashChild(st record.Store) {
	ctx := context.Background()
	var mu sync.Mutex
	out := bufio.NewWriter(os.Stdout)
	fail := func(err error) {
		fmt.Fprintln(os.Stderr, "crash child:", err)
		os.Exit(3)
	}
	var wg sync.WaitGroup
	for w := 0; w < crashWriters; w++ {
		sid := crashSession(w)
		if err := st.Delete(ctx, sid); err != nil {
			fail(err)
		}
		if err := st.Snapshot(ctx, sid, 0, []byte(sid)); err != nil {
			fail(err)
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			for v := uint64(2); v < crashMaxWrites; v++ {
				var err error
				if f, ok := record.AsFeed(st); ok {
					err = f.AppendNoted(ctx, sid, v-1, crashEvent(sid, v), []record.FeedEvent{{Kind: "crash", Data: []byte(fmt.Sprint(sid, " ", v))}})
				} else {
					err = st.Append(ctx, sid, v-1, crashEvent(sid, v))
				}
				if err != nil {
					fail(err)
				}
				mu.Lock()
				fmt.Fprintln(out, sid, v)
				err = out.Flush()
				mu.Unlock()
				if err != nil {
					fail(err)
				}
			}
		}()
	}
	wg.Wait()
	fail(errors.New("nobody killed the child"))
}

func crashSession(w int) string { return fmt.Sprint("crash-", w) }

// crashEvent is the event at version v of session sid: a few hundred bytes
// to 64 KiB, so the kill often lands in the middle of a large write.
func crashEvent(sid string, v uint64) []byte {
	size := 200
	if v%5 == 0 {
		size = 64 << 10
	}
	head := fmt.Sprintf("%s v%d ", sid, v)
	return append([]byte(head), pattern(size, uint32(v))...)
}

// raceSession is the session RaceProcesses' children write.
const raceSession = "race"

// RaceProcesses checks version conflicts between processes: it runs the
// calling test again in two child processes at once (with env added to
// their environment, to tell them where the backend is), each racing two
// writers on one session as the ConcurrentWriters subtests do. Every
// version must have been acknowledged to exactly one writer of either
// process, and the session must hold exactly those writes. The calling
// test must be a top-level test; in a child (InChild), it opens the Store
// and calls Child instead.
func RaceProcesses(t *testing.T, env []string, open Opener) {
	st := open(t)
	if err := st.Delete(t.Context(), raceSession); err != nil {
		t.Fatal(err)
	}
	type result struct {
		out, stderr bytes.Buffer
		err         error
	}
	results := make([]*result, 2)
	var wg sync.WaitGroup
	for p := range results {
		r := &result{}
		results[p] = r
		cmd := child(t, fmt.Sprintf("race p%d", p), env)
		cmd.Stdout, cmd.Stderr = &r.out, &r.stderr
		wg.Add(1)
		go func() {
			defer wg.Done()
			r.err = cmd.Run()
		}()
	}
	wg.Wait()
	winners := map[uint64]string{}
	wins := make([]int, len(results))
	for p, r := range results {
		if r.err != nil {
			t.Fatalf("child %d: %v\n%s", p, r.err, r.stderr.String())
		}
		sc := bufio.NewScanner(&r.out)
		for sc.Scan() {
			vs, payload, ok := strings.Cut(sc.Text(), " ")
			v, err := strconv.ParseUint(vs, 10, 64)
			if !ok || err != nil {
				continue // not ours (test framework output)
			}
			if prev, dup := winners[v]; dup {
				t.Errorf("version %d acknowledged twice: %s and %s", v, prev, payload)
			}
			winners[v] = payload
			wins[p]++
		}
	}
	checkHistory(t, st, raceSession, winners)
	t.Logf("versions won by each process: %v", wins)
}

// raceChild is a child's part of RaceProcesses: it races two writers (two
// Store instances would be the same; st is shared) and prints
// "<version> <payload>" for each acknowledged write. It exits on failure.
func raceChild(st record.Store, tag string) {
	won, err := race(context.Background(), []record.Store{st, st}, raceSession, tag)
	for _, w := range won {
		fmt.Println(w.version, w.payload)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "race child:", err)
		os.Exit(3)
	}
}

// Fork crash parameters: the parent session's events, and the
// acknowledged forks after which the child is killed.
const (
	forkCrashEvents    = 300
	forkCrashKillAfter = 150
)

// forkParent is the session ForkCrash's child forks.
const forkParent = "fork-crash-parent"

// ForkCrash checks forks against the forking writer's sudden death: it
// runs the calling test again in a child process (with env added to its
// environment, as for Crash), which writes a session of a few hundred
// versions and then forks it as fast as it can, each fork at another
// version, printing every acknowledged fork, while it goes on appending to
// the parent; after forkCrashKillAfter forks the child is killed with
// SIGKILL. Then every acknowledged fork must read as the parent stood at
// its version, any other fork stored (the one in flight) must too, and
// the parent must hold every acknowledged append.
func ForkCrash(t *testing.T, env []string, open func(t *testing.T) record.CheckpointStore) {
	cmd := child(t, "fork", env)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	forks := map[string]uint64{} // acknowledged fork: parent version
	var parentAcked uint64
	read := func(line string) bool {
		f := strings.Fields(line)
		if len(f) != 3 {
			return false
		}
		v, err := strconv.ParseUint(f[2], 10, 64)
		if err != nil {
			return false
		}
		switch f[0] {
		case "fork":
			forks[f[1]] = v
			return true
		case "append":
			parentAcked = v
		}
		return false
	}
	sc := bufio.NewScanner(out)
	n := 0
	for n < forkCrashKillAfter && sc.Scan() {
		if read(sc.Text()) {
			n++
		}
	}
	if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatalf("kill the child: %v", err)
	}
	for sc.Scan() {
		read(sc.Text())
	}
	werr := cmd.Wait()
	if n < forkCrashKillAfter {
		t.Fatalf("the child stopped after %d acknowledged forks (%v):\n%s", n, werr, stderr.String())
	}
	if ws, ok := cmd.ProcessState.Sys().(syscall.WaitStatus); !ok || !ws.Signaled() || ws.Signal() != syscall.SIGKILL {
		t.Fatalf("the child ended before it was killed (%v):\n%s", werr, stderr.String())
	}
	st := open(t)
	parent, err := st.Load(t.Context(), forkParent)
	if err != nil {
		t.Fatalf("%s: %v", forkParent, err)
	}
	if v := parent.Version(); v < parentAcked || v > parentAcked+1 {
		t.Errorf("%s at version %d; the child acknowledged %d", forkParent, v, parentAcked)
	}
	ids, err := st.(record.SessionLister).List(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	stored := 0
	for _, id := range ids {
		if !strings.HasPrefix(id, "fork-crash-child-") {
			continue
		}
		stored++
		v, acked := forks[id]
		if !acked {
			// The fork in flight: whole, at the version its name says.
			_, vs, _ := strings.Cut(strings.TrimPrefix(id, "fork-crash-child-"), "-")
			v, _ = strconv.ParseUint(vs, 10, 64)
		}
		got, err := st.Load(t.Context(), id)
		if err != nil {
			t.Errorf("fork %s (acknowledged %v): %v", id, acked, err)
			continue
		}
		want, err := st.LoadAt(t.Context(), forkParent, v)
		if err != nil {
			t.Errorf("%s at %d: %v", forkParent, v, err)
			continue
		}
		if got.Version() != 1 || !slices.EqualFunc(got.Events, want.Events, bytes.Equal) || !bytes.Equal(got.Snapshot, want.Snapshot) {
			t.Errorf("fork %s reads %d events at version %d, the parent at %d holds %d", id, len(got.Events), got.Version(), v, len(want.Events))
		}
	}
	for id := range forks {
		if ok, err := record.Stored(t.Context(), st, id); err != nil || !ok {
			t.Errorf("acknowledged fork %s not stored (%v)", id, err)
		}
	}
	if stored < len(forks) || stored > len(forks)+1 {
		t.Errorf("%d forks stored, %d acknowledged (at most one more may have been in flight)", stored, len(forks))
	}
	t.Logf("killed the forking writer after %d acknowledged forks (parent at version %d)", len(forks), parent.Version())
}

// forkChild is the child's part of ForkCrash. It never returns.
func forkChild(st record.Store) {
	ctx := context.Background()
	fail := func(err error) {
		fmt.Fprintln(os.Stderr, "fork child:", err)
		os.Exit(3)
	}
	cs, ok := st.(record.CheckpointStore)
	if !ok {
		fail(errors.New("the store keeps no checkpoints"))
	}
	ids, err := st.(record.SessionLister).List(ctx)
	if err != nil {
		fail(err)
	}
	for _, id := range ids {
		if strings.HasPrefix(id, "fork-crash-") {
			if err := st.Delete(ctx, id); err != nil {
				fail(err)
			}
		}
	}
	if err := st.Snapshot(ctx, forkParent, 0, []byte(forkParent)); err != nil {
		fail(err)
	}
	v := uint64(1)
	for ; v <= forkCrashEvents; v++ {
		if v%50 == 0 {
			err = st.Snapshot(ctx, forkParent, v, crashEvent(forkParent, v+1))
		} else {
			err = st.Append(ctx, forkParent, v, crashEvent(forkParent, v+1))
		}
		if err != nil {
			fail(err)
		}
	}
	var mu sync.Mutex
	out := bufio.NewWriter(os.Stdout)
	print := func(args ...any) {
		mu.Lock()
		defer mu.Unlock()
		fmt.Fprintln(out, args...)
		if err := out.Flush(); err != nil {
			fail(err)
		}
	}
	go func() { // the parent goes on meanwhile
		for v := v; ; v++ {
			if err := st.Append(ctx, forkParent, v, crashEvent(forkParent, v+1)); err != nil {
				fail(err)
			}
			print("append", forkParent, v+1)
		}
	}()
	for i := 0; i < crashMaxWrites; i++ {
		at := uint64(1 + i*7%forkCrashEvents)
		id := fmt.Sprintf("fork-crash-child-%d-%d", i, at)
		if err := cs.Fork(ctx, forkParent, at, id, nil); err != nil {
			fail(err)
		}
		print("fork", id, at)
	}
	fail(errors.New("nobody killed the child"))
}
