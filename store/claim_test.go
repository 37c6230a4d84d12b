package store_test

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/ctxhost/ctxhost/store"
)

// TestClaim: a directory of files is used alone and refuses to be shared;
// a SQLite file used alone by one process refuses a second one either way
// and accepts it once both share it. Refusals are ClaimRefused, so a
// command can tell them from a store it cannot reach.
func TestClaim(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	open := func(spec string) store.Store {
		t.Helper()
		st, err := store.Open(ctx, spec)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = st.Close() })
		return st
	}
	files := open("file:" + filepath.Join(dir, "state"))
	if err := files.Claim(true); !store.ClaimRefused(err) {
		t.Errorf("sharing a directory of files: %v, want a refusal", err)
	}
	if err := files.Claim(false); err != nil {
		t.Errorf("a directory of files alone: %v", err)
	}

	alone := open("sqlite:" + filepath.Join(dir, "alone.db"))
	if err := alone.Claim(false); err != nil {
		t.Fatalf("a SQLite file alone: %v", err)
	}
	for _, shared := range []bool{false, true} {
		if err := open("sqlite:" + filepath.Join(dir, "alone.db")).Claim(shared); !store.ClaimRefused(err) {
			t.Errorf("a second process on a SQLite file held alone (shared %v): %v, want a refusal", shared, err)
		}
	}
	first, second := open("sqlite:"+filepath.Join(dir, "shared.db")), open("sqlite:"+filepath.Join(dir, "shared.db"))
	if err := first.Claim(true); err != nil {
		t.Fatal(err)
	}
	if err := second.Claim(true); err != nil {
		t.Errorf("two processes sharing a SQLite file: %v", err)
	}
	if store.ClaimRefused(context.DeadlineExceeded) {
		t.Error("an unrelated error was read as a refusal")
	}
}
