package callpath

import (
	"context"
	"errors"
	"fmt"
	"net/http"

	"github.com/ctxhost/ctxhost/engine"
	"github.com/ctxhost/ctxhost/sdk"
)

// editedFunc is told by reconcile that the caller's conversation is the
// session's history edited at an earlier message: full is the history
// (ctxhost's own tool turns included), k how many of the messages the
// caller sees of it the conversation starts with.
type editedFunc func(es *engine.Session, full []sdk.Message, k int) error

// errEdited ends a reconcile whose conversation is the session's history
// edited at an earlier message, on a session that branches: to is the
// checkpoint to go back to (0: none matches; the history is replaced
// once the branch is kept).
type errEdited struct{ to uint64 }

func (e *errEdited) Error() string {
	return fmt.Sprintf("the conversation is the session's history edited at an earlier message (checkpoint %d)", e.to)
}

// isBranching reports whether a reconcile ended with err to branch the
// session (errEdited), or failed branching it (a callError of its own).
func isBranching(err error) bool {
	var ed *errEdited
	var ce *callError
	return errors.As(err, &ed) || errors.As(err, &ce)
}

// edited is the editedFunc of the call's reconcile: nil when the call
// keeps nothing (a token count), has branched already, or its sessions do
// not branch.
func (c *call) edited(ctx context.Context) editedFunc {
	if c.counting || c.branch != "" || c.h.branches == nil {
		return nil
	}
	return func(es *engine.Session, full []sdk.Message, k int) error {
		if es.StoredVersion() == 0 {
			return nil
		}
		cps, err := es.Checkpoints(ctx)
		if errors.Is(err, engine.ErrNoCheckpoints) {
			return nil // the history is replaced, as the store keeps no branch
		}
		if err != nil {
			return failf(http.StatusServiceUnavailable, "store", "read the session's checkpoints: %v", err)
		}
		return &errEdited{to: matchingCheckpoint(es, cps, full, k)}
	}
}

// matchingCheckpoint is the version of the checkpoint among cps whose
// history the caller's conversation starts with: the history of the
// session (full) starts with the checkpoint's (their digests agree), and
// of it the caller sees at most the k messages the conversation starts
// with. Of those, the one with the most messages (the latest of them
// when several have as many); 0 when none is.
func matchingCheckpoint(es *engine.Session, cps []engine.Checkpoint, full []sdk.Message, k int) uint64 {
	// seen[j]: how many of full[:j] the caller sees (agentView).
	seen := make([]int, len(full)+1)
	for i := range full {
		seen[i+1] = seen[i]
		if !ownMarked(full[i]) || len(agentView(full[i:i+1])) == 1 {
			seen[i+1]++
		}
	}
	var best uint64
	most := -1
	for _, cp := range cps {
		n := cp.Turn.Messages
		if cp.Turn.History == "" || n <= 0 || n > len(full) || seen[n] > k || n < most {
			continue
		}
		if es.HistoryDigest(n) != cp.Turn.History {
			continue
		}
		best, most = cp.Version, n
	}
	return best
}

// prepare reconciles the caller's conversation with the session and
// prepares its context (prepareOn). A conversation that is the session's
// history edited at an earlier message first branches the session (see
// Brancher): the session goes on, rewound to the checkpoint the
// conversation starts with or with its history replaced, from the
// session it returns (es itself, or es reopened as rewound).
func (c *call) prepare(ctx context.Context, es *engine.Session) (engine.Turn, *engine.Session, error) {
	turn, err := c.prepareOn(ctx, es)
	var ed *errEdited
	if !errors.As(err, &ed) {
		return turn, es, err
	}
	branch, next, err := c.h.branches.Branch(ctx, c.session, es, ed.to)
	if err != nil {
		return turn, es, errors.Join(failf(http.StatusServiceUnavailable, "store",
			"the conversation edits the session's history at an earlier message, and the history it leaves could not be kept: %v", err), ErrUnsaved)
	}
	c.branch, c.forked = branch, ed.to != 0
	c.w.Header().Set(BranchHeader, branch)
	turn, err = c.prepareOn(ctx, next)
	return turn, next, err
}
