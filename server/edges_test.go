package server

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"connectrpc.com/connect"

	"github.com/ctxhost/ctxhost/api/servicev1"
	"github.com/ctxhost/ctxhost/record"
	"github.com/ctxhost/ctxhost/store/filestore"
	"github.com/ctxhost/ctxhost/store/sqlite"
)

// countingStore counts the saves made through it and fails reads on
// demand.
type countingStore struct {
	record.Store
	saves    atomic.Int64
	loadFail atomic.Pointer[error]
}

func (c *countingStore) Append(ctx context.Context, id string, expected uint64, ev []byte) error {
	c.saves.Add(1)
	return c.Store.Append(ctx, id, expected, ev)
}

func (c *countingStore) Snapshot(ctx context.Context, id string, expected uint64, state []byte) error {
	c.saves.Add(1)
	return c.Store.Snapshot(ctx, id, expected, state)
}

func (c *countingStore) Load(ctx context.Context, id string) (record.StoredSession, error) {
	if err := c.loadFail.Load(); err != nil {
		return record.StoredSession{}, *err
	}
	return c.Store.Load(ctx, id)
}

func newCountingServer(t *testing.T) (*Server, *countingStore) {
	t.Helper()
	dir := t.TempDir()
	fs, err := filestore.New(filepath.Join(dir, "store"))
	if err != nil {
		t.Fatal(err)
	}
	st := &countingStore{Store: fs}
	return newTestServerOn(t, dir, st), st
}

func userMessages(texts ...string) []*servicev1.Message {
	var out []*servicev1.Message
	for _, t := range texts {
		out = append(out, &servicev1.Message{Role: "user", Content: t})
	}
	return out
}

func TestAppendIsWholeOrNothingInOneSave(t *testing.T) {
	ctx := context.Background()
	s, st := newCountingServer(t)
	c := client(t, s)
	created, err := c.CreateSession(ctx, req(&servicev1.CreateSessionRequest{SessionId: "a", Instructions: "be careful", IdempotencyKey: "c"}))
	if err != nil {
		t.Fatal(err)
	}
	saves := st.saves.Load()
	if saves != 1 || created.Msg.Sequence != 1 {
		t.Fatalf("create with a system prompt and instructions: %d saves, sequence %d; want 1 and 1", saves, created.Msg.Sequence)
	}
	msgs := append(userMessages("one", "two"), &servicev1.Message{Role: "nobody", Content: "bad"})
	_, err = c.AppendMessages(ctx, req(&servicev1.AppendMessagesRequest{SessionId: "a", Messages: msgs}))
	if connect.CodeOf(err) != connect.CodeInvalidArgument || !strings.Contains(err.Error(), "message 2") {
		t.Fatalf("append with an invalid third message: %v", err)
	}
	info, _ := c.GetSession(ctx, req(&servicev1.GetSessionRequest{SessionId: "a"}))
	if info.Msg.Messages != 0 || info.Msg.Sequence != created.Msg.Sequence || st.saves.Load() != saves {
		t.Fatalf("after a refused append: %d messages, sequence %d (was %d), %d saves", info.Msg.Messages,
			info.Msg.Sequence, created.Msg.Sequence, st.saves.Load()-saves)
	}
	res, err := c.AppendMessages(ctx, req(&servicev1.AppendMessagesRequest{SessionId: "a",
		Messages: userMessages("1", "2", "3", "4", "5"), Write: &servicev1.WriteOptions{IdempotencyKey: "k"}}))
	if err != nil {
		t.Fatal(err)
	}
	if n := st.saves.Load() - saves; n != 1 || res.Msg.Sequence != created.Msg.Sequence+1 {
		t.Fatalf("five messages: %d saves, sequence %d, want 1 save and sequence %d", n, res.Msg.Sequence, created.Msg.Sequence+1)
	}
	want := []string{"m2", "m2.1", "m2.2", "m2.3", "m2.4"}
	if fmt.Sprint(res.Msg.Ids) != fmt.Sprint(want) {
		t.Fatalf("ids %v, want %v", res.Msg.Ids, want)
	}
}

func TestKeyReusedWithOtherContentIsRefused(t *testing.T) {
	ctx := context.Background()
	s := newTestServer(t, t.TempDir())
	c := client(t, s)
	if _, err := c.CreateSession(ctx, req(&servicev1.CreateSessionRequest{SessionId: "a", IdempotencyKey: "c"})); err != nil {
		t.Fatal(err)
	}
	_, err := c.CreateSession(ctx, req(&servicev1.CreateSessionRequest{SessionId: "a", IdempotencyKey: "c", SystemPrompt: "other"}))
	if connect.CodeOf(err) != connect.CodeInvalidArgument {
		t.Fatalf("create again with the key and another system prompt: %v", err)
	}
	w := &servicev1.WriteOptions{IdempotencyKey: "k"}
	first, err := c.AppendMessages(ctx, req(&servicev1.AppendMessagesRequest{SessionId: "a", Write: w, Messages: userMessages("first")}))
	if err != nil {
		t.Fatal(err)
	}
	_, err = c.AppendMessages(ctx, req(&servicev1.AppendMessagesRequest{SessionId: "a", Write: w, Messages: userMessages("other")}))
	if connect.CodeOf(err) != connect.CodeInvalidArgument || !strings.Contains(err.Error(), "different request") {
		t.Fatalf("the key with other messages: %v", err)
	}
	again, err := c.AppendMessages(ctx, req(&servicev1.AppendMessagesRequest{SessionId: "a",
		Write: &servicev1.WriteOptions{IdempotencyKey: "k", ExpectedSequence: 1}, Messages: userMessages("first")}))
	if err != nil || !again.Msg.Replayed || again.Msg.Ids[0] != first.Msg.Ids[0] {
		t.Fatalf("the same request again: %v %v", again, err)
	}
	_, err = c.SetText(ctx, req(&servicev1.SetTextRequest{SessionId: "a", Text: servicev1.Text_TEXT_INPUT, Value: "x", Write: w}))
	if connect.CodeOf(err) != connect.CodeInvalidArgument {
		t.Fatalf("the key on another method: %v", err)
	}
	info, _ := c.GetSession(ctx, req(&servicev1.GetSessionRequest{SessionId: "a"}))
	if info.Msg.Messages != 1 {
		t.Fatalf("%d messages stored, want 1", info.Msg.Messages)
	}
}

func TestAppendLimits(t *testing.T) {
	ctx := context.Background()
	s := newTestServer(t, t.TempDir())
	s.limits = Limits{MaxAppendMessages: 3, MaxAppendBytes: 200}.withDefaults()
	c := client(t, s)
	if _, err := c.CreateSession(ctx, req(&servicev1.CreateSessionRequest{SessionId: "a"})); err != nil {
		t.Fatal(err)
	}
	for name, msgs := range map[string][]*servicev1.Message{
		"four messages": userMessages("1", "2", "3", "4"),
		"300 bytes":     userMessages(strings.Repeat("x", 300)),
		"NUL in an id":  {{Role: "user", Content: "x", Id: "a\x00b"}},
	} {
		_, err := c.AppendMessages(ctx, req(&servicev1.AppendMessagesRequest{SessionId: "a", Messages: msgs}))
		if connect.CodeOf(err) != connect.CodeInvalidArgument || !strings.Contains(err.Error(), "at most") && !strings.Contains(err.Error(), "NUL") {
			t.Errorf("%s: %v", name, err)
		}
	}
	if _, err := c.AppendMessages(ctx, req(&servicev1.AppendMessagesRequest{SessionId: "a", Messages: userMessages("1", "2", "3")})); err != nil {
		t.Fatalf("within the limits: %v", err)
	}
}

func TestLockWaitIsBounded(t *testing.T) {
	ctx := context.Background()
	s := newTestServer(t, t.TempDir())
	s.limits.LockWait = 50 * time.Millisecond
	c := client(t, s)
	if _, err := c.CreateSession(ctx, req(&servicev1.CreateSessionRequest{SessionId: "a"})); err != nil {
		t.Fatal(err)
	}
	unlock, err := s.lock(ctx, "a") // a call that does not end
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	_, err = c.AppendMessages(ctx, req(&servicev1.AppendMessagesRequest{SessionId: "a", Messages: userMessages("x")}))
	if connect.CodeOf(err) != connect.CodeUnavailable || time.Since(start) > 5*time.Second {
		t.Fatalf("append while the session is held: %v after %s", err, time.Since(start))
	}
	s.limits.LockWait = time.Minute // the caller's deadline comes first
	cctx, cancel := context.WithTimeout(ctx, 20*time.Millisecond)
	defer cancel()
	if _, err := s.lock(cctx, "a"); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("lock past the caller's deadline: %v", err)
	}
	unlock()
	info, err := c.GetSession(ctx, req(&servicev1.GetSessionRequest{SessionId: "a"}))
	if err != nil || info.Msg.Messages != 0 {
		t.Fatalf("after: %v %v", info, err)
	}
}

func TestCanceledAppendChangesNothing(t *testing.T) {
	s := newTestServer(t, t.TempDir())
	c := client(t, s)
	if _, err := c.CreateSession(context.Background(), req(&servicev1.CreateSessionRequest{SessionId: "a"})); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	for range 20 { // the lock may be taken first; the append must still not happen
		if _, err := s.AppendMessages(ctx, req(&servicev1.AppendMessagesRequest{SessionId: "a", Messages: userMessages("x")})); err == nil {
			t.Fatal("append with a canceled context succeeded")
		}
	}
	info, _ := c.GetSession(context.Background(), req(&servicev1.GetSessionRequest{SessionId: "a"}))
	if info.Msg.Messages != 0 {
		t.Fatalf("%d messages after canceled appends", info.Msg.Messages)
	}
}

func TestCreateWithOneKeyThroughTwoServers(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	var clients [2]interface {
		CreateSession(context.Context, *connect.Request[servicev1.CreateSessionRequest]) (*connect.Response[servicev1.SessionInfo], error)
	}
	for i := range clients {
		st, err := sqlite.New(filepath.Join(dir, "shared.db"))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { st.Close() })
		clients[i] = client(t, newTestServerOn(t, t.TempDir(), st))
	}
	for n := range 10 {
		id := fmt.Sprintf("s%d", n)
		var wg sync.WaitGroup
		var created, replayed atomic.Int64
		errs := make(chan error, 4)
		for i := range 4 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				res, err := clients[i%2].CreateSession(ctx, req(&servicev1.CreateSessionRequest{SessionId: id, IdempotencyKey: "k"}))
				switch {
				case err != nil:
					errs <- err
				case res.Msg.Replayed:
					replayed.Add(1)
				default:
					created.Add(1)
				}
			}()
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			t.Errorf("%s: %v", id, err)
		}
		if created.Load() != 1 || replayed.Load() != 3 {
			t.Fatalf("%s: %d created, %d replayed; want 1 and 3", id, created.Load(), replayed.Load())
		}
	}
}

func TestStoreFailuresAreUnavailableAndDamageIsDataLoss(t *testing.T) {
	ctx := context.Background()
	s, st := newCountingServer(t)
	c := client(t, s)
	if _, err := c.CreateSession(ctx, req(&servicev1.CreateSessionRequest{SessionId: "a"})); err != nil {
		t.Fatal(err)
	}
	s.Close(ctx) // nothing in memory: the next call reads the store
	down := fmt.Errorf("dial tcp 127.0.0.1:5432: connection refused")
	st.loadFail.Store(&down)
	_, err := c.GetSession(ctx, req(&servicev1.GetSessionRequest{SessionId: "a"}))
	if connect.CodeOf(err) != connect.CodeUnavailable {
		t.Fatalf("store down: %v", err)
	}
	if r := s.readiness(ctx); r.Status != "NOT_SERVING" {
		t.Fatalf("readiness after a temporary failure: %v", r)
	}
	damaged := fmt.Errorf("event 3: checksum mismatch: %w", record.ErrDamaged)
	st.loadFail.Store(&damaged)
	_, err = c.GetSession(ctx, req(&servicev1.GetSessionRequest{SessionId: "a"}))
	if connect.CodeOf(err) != connect.CodeDataLoss {
		t.Fatalf("damaged store: %v", err)
	}
	st.loadFail.Store(nil)
	if _, err := c.GetSession(ctx, req(&servicev1.GetSessionRequest{SessionId: "a"})); err != nil {
		t.Fatal(err)
	}
	if r := s.readiness(ctx); r.Status != "SERVING" {
		t.Fatalf("readiness after the store came back: %v", r)
	}
}

func TestTurnAppendsAndPreparesInOneSave(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	fs, err := filestore.New(filepath.Join(dir, "store"))
	if err != nil {
		t.Fatal(err)
	}
	st := &countingStore{Store: fs}
	c := client(t, newTestServerOn(t, dir, st))
	created, err := c.CreateSession(ctx, req(&servicev1.CreateSessionRequest{SessionId: "a"}))
	if err != nil {
		t.Fatal(err)
	}
	saves := st.saves.Load()
	turn := &servicev1.PrepareRequest{SessionId: "a", Messages: userMessages("look at parse.go", "the parser drops a token"),
		Write: &servicev1.WriteOptions{IdempotencyKey: "t1"}}
	res, err := c.Prepare(ctx, req(turn))
	if err != nil {
		t.Fatal(err)
	}
	if n := st.saves.Load() - saves; n != 1 || res.Msg.Sequence != created.Msg.Sequence+1 {
		t.Fatalf("a turn of two messages: %d saves, sequence %d; want 1 save and sequence %d", n, res.Msg.Sequence, created.Msg.Sequence+1)
	}
	if want := []string{"m2", "m2.1"}; fmt.Sprint(res.Msg.MessageIds) != fmt.Sprint(want) {
		t.Fatalf("message ids %v, want %v", res.Msg.MessageIds, want)
	}
	if !strings.Contains(res.Msg.Payload, "the parser drops a token") {
		t.Fatalf("the turn's payload misses its messages:\n%s", res.Msg.Payload)
	}
	again, err := c.Prepare(ctx, req(turn))
	if err != nil || !again.Msg.Replayed || fmt.Sprint(again.Msg.MessageIds) != fmt.Sprint(res.Msg.MessageIds) ||
		again.Msg.Payload != res.Msg.Payload || st.saves.Load()-saves != 1 {
		t.Fatalf("the turn retried with its key: replayed %v, ids %v, %d saves, %v", again.Msg.GetReplayed(), again.Msg.GetMessageIds(), st.saves.Load()-saves, err)
	}
	bad := append(userMessages("fine"), &servicev1.Message{Role: "nobody", Content: "bad"})
	_, err = c.Prepare(ctx, req(&servicev1.PrepareRequest{SessionId: "a", Messages: bad}))
	if connect.CodeOf(err) != connect.CodeInvalidArgument || !strings.Contains(err.Error(), "message 1") {
		t.Fatalf("a turn with an invalid second message: %v", err)
	}
	info, err := c.GetSession(ctx, req(&servicev1.GetSessionRequest{SessionId: "a"}))
	if err != nil || info.Msg.Messages != 2 || info.Msg.Sequence != res.Msg.Sequence || st.saves.Load()-saves != 1 {
		t.Fatalf("after a refused turn: %v, %d saves, %v; want 2 messages at sequence %d", info.Msg, st.saves.Load()-saves, err, res.Msg.Sequence)
	}
	// A server started again over the store holds the turn whole: the
	// messages, and the prepared turn's figures (the state it exports),
	// and it prepares the same payload.
	live, err := c.ExportState(ctx, req(&servicev1.ExportStateRequest{SessionId: "a"}))
	if err != nil {
		t.Fatal(err)
	}
	c2 := client(t, newTestServerOn(t, t.TempDir(), fs))
	stored, err := c2.ExportState(ctx, req(&servicev1.ExportStateRequest{SessionId: "a"}))
	if err != nil || string(stored.Msg.State) != string(live.Msg.State) {
		t.Fatalf("the state read again from the store differs from the live one (%v):\n%s\n%s", err, stored.Msg.GetState(), live.Msg.State)
	}
	reopened, err := c2.Prepare(ctx, req(&servicev1.PrepareRequest{SessionId: "a", KnownPayloadTag: res.Msg.PayloadTag}))
	if err != nil || !reopened.Msg.PayloadUnchanged {
		t.Fatalf("the turn prepared again after a restart: unchanged %v, %v", reopened.Msg.GetPayloadUnchanged(), err)
	}
}
