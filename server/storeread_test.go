package server

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync/atomic"
	"testing"

	"connectrpc.com/connect"

	"github.com/ctxhost/ctxhost/api/servicev1"
	"github.com/ctxhost/ctxhost/config"
	"github.com/ctxhost/ctxhost/engine"
	"github.com/ctxhost/ctxhost/record"
	"github.com/ctxhost/ctxhost/store/filestore"
)

// failingBlocks is a block store whose reads fail while failing is set,
// as a store whose connection was cut does.
type failingBlocks struct {
	record.BlockStore
	failing atomic.Bool
}

func (f *failingBlocks) Blocks(ctx context.Context, scopes []string) ([]record.Block, error) {
	if f.failing.Load() {
		return nil, errors.New("read memory blocks: FATAL: terminating connection due to administrator command (SQLSTATE 57P01)")
	}
	return f.BlockStore.Blocks(ctx, scopes)
}

// TestStoreReadFailureIsUnavailable: a Prepare whose read of the memory
// blocks fails (the store's connection cut, as the chaos suite cuts
// PostgreSQL's) is UNAVAILABLE, which clients retry, not INTERNAL; the
// retry passes once the store answers.
func TestStoreReadFailureIsUnavailable(t *testing.T) {
	dir := t.TempDir()
	st, err := filestore.New(filepath.Join(dir, "store"))
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "c.hcl")
	if err := os.WriteFile(path, []byte(fmt.Sprintf(testHCL, planBinary)), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg, diags := config.Load([]string{path}, map[string]string{}, nil)
	if diags.HasErrors() {
		t.Fatal(diags)
	}
	blocks := &failingBlocks{BlockStore: record.NewMemoryBlocks()}
	e, err := engine.Start(context.Background(), cfg, engine.Options{Context: "first", Store: st, Blocks: blocks})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(e.Close)
	s, err := New(Options{Engines: map[string]*engine.Engine{"first": e}, Profiles: []string{"first"}, Store: st})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close(context.Background()) })
	c := client(t, s)
	ctx := context.Background()
	if _, err := c.CreateSession(ctx, req(&servicev1.CreateSessionRequest{SessionId: "a"})); err != nil {
		t.Fatal(err)
	}
	blocks.failing.Store(true)
	_, err = c.Prepare(ctx, req(&servicev1.PrepareRequest{SessionId: "a"}))
	if connect.CodeOf(err) != connect.CodeUnavailable {
		t.Errorf("Prepare while the store's reads fail: %v; want UNAVAILABLE", err)
	}
	blocks.failing.Store(false)
	if _, err := c.Prepare(ctx, req(&servicev1.PrepareRequest{SessionId: "a"})); err != nil {
		t.Errorf("Prepare once the store answers: %v", err)
	}
}
