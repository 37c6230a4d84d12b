package client

import (
	"context"
	"fmt"

	"connectrpc.com/connect"

	"github.com/ctxhost/ctxhost/api/servicev1"
)

// Checkpoints: every acknowledged turn of a session on a SQLite or
// PostgreSQL store is one, kept as the host block's retention says.
//
//	cps, err := c.Checkpoints(ctx, "run-43")
//	at, err := c.Checkpoint(ctx, "run-43", cps[0].Sequence)     // history, texts, budget, payload tag
//	fork, err := c.Fork(ctx, "run-43", cps[0].Sequence, "run-43-b")
//	rw, err := c.Rewind(ctx, "run-43", cps[1].Sequence, "")     // rw.BranchSessionId keeps what came after

// Checkpoints returns session id's kept checkpoints, oldest first.
func (c *Client) Checkpoints(ctx context.Context, id string) ([]*servicev1.Checkpoint, error) {
	res, err := c.Raw.ListCheckpoints(ctx, connect.NewRequest(&servicev1.ListCheckpointsRequest{SessionId: id}))
	if err != nil {
		return nil, fmt.Errorf("list checkpoints of %q: %w", id, err)
	}
	return res.Msg.Checkpoints, nil
}

// Checkpoint reads session id as it stood at sequence (0: its current
// one), its whole history included.
func (c *Client) Checkpoint(ctx context.Context, id string, sequence uint64) (*servicev1.GetCheckpointResponse, error) {
	res, err := c.Raw.GetCheckpoint(ctx, connect.NewRequest(&servicev1.GetCheckpointRequest{SessionId: id, Sequence: sequence}))
	if err != nil {
		return nil, fmt.Errorf("read %q at sequence %d: %w", id, sequence, err)
	}
	return res.Msg, nil
}

// Fork makes session newID as session id stood at sequence (0: its
// current one).
func (c *Client) Fork(ctx context.Context, id string, sequence uint64, newID string) (*servicev1.ForkSessionResponse, error) {
	res, err := c.Raw.ForkSession(ctx, connect.NewRequest(&servicev1.ForkSessionRequest{SessionId: id, Sequence: sequence, NewSessionId: newID}))
	if err != nil {
		return nil, fmt.Errorf("fork %q at sequence %d as %q: %w", id, sequence, newID, err)
	}
	return res.Msg, nil
}

// Rewind takes session id back to its checkpoint at sequence; what came
// after is kept as session branch ("": "ID:branch-SEQUENCE").
func (c *Client) Rewind(ctx context.Context, id string, sequence uint64, branch string) (*servicev1.RewindSessionResponse, error) {
	res, err := c.Raw.RewindSession(ctx, connect.NewRequest(&servicev1.RewindSessionRequest{SessionId: id, Sequence: sequence, BranchSessionId: branch}))
	if err != nil {
		return nil, fmt.Errorf("rewind %q to sequence %d: %w", id, sequence, err)
	}
	return res.Msg, nil
}
