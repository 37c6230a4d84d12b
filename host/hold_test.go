package host_test

import (
	"context"
	"errors"
	"testing"

	"github.com/ctxhost/ctxhost/sdk"
)

// TestHoldThenBatchSavesOnce: changes made under Hold are saved with the
// next Batch, in one store write, and a reopened session holds them all;
// a failed Batch saves nothing.
func TestHoldThenBatchSavesOnce(t *testing.T) {
	ctx := context.Background()
	store, s := newStoredSession(t, 0)
	before := store.saves
	err := s.Durability().Hold(func() error {
		if _, err := s.Conversation().AddMessage(sdk.Message{Role: sdk.RoleUser, Content: "fix the parser"}); err != nil {
			return err
		}
		_, err := s.Prepare(ctx, sdk.AgentIdentity{})
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	if store.saves != before {
		t.Fatalf("Hold saved %d times; want none", store.saves-before)
	}
	if err := s.Durability().Batch(func() error {
		_, err := s.Conversation().AddMessage(sdk.Message{Role: sdk.RoleAssistant, Content: "on it"})
		return err
	}); err != nil {
		t.Fatal(err)
	}
	if store.saves != before+1 {
		t.Fatalf("Hold then Batch saved %d times; want one", store.saves-before)
	}
	if got := len(reopenStored(t, store, "s1").Conversation().History()); got != 2 {
		t.Fatalf("reopened: %d messages, want 2", got)
	}
	failed := errors.New("upstream failed")
	if err := s.Durability().Batch(func() error { return failed }); !errors.Is(err, failed) || store.saves != before+1 {
		t.Fatalf("a failed Batch: %v, %d saves", err, store.saves-before)
	}
}
