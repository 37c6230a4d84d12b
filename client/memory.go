package client

import (
	"context"
	"fmt"

	"connectrpc.com/connect"

	"github.com/ctxhost/ctxhost/api/servicev1"
)

// Memory blocks: named, size-limited texts shared by the sessions of a
// scope ("session:ID", "agent:NAME" or "group:NAME") and pinned in the
// system text of every prepare of those sessions.
//
//	b, err := c.PutMemoryBlock(ctx, &servicev1.MemoryBlock{Scope: "group:team", Label: "standards",
//		Value: "Run the race tests before every commit.", Limit: 2000}, 0)
//	b, err = c.AppendMemoryBlock(ctx, "group:team", "standards", "Never force-push main.")
//	info, err := c.CreateSessionIn(ctx, "run-43", "", "coder", "team")

// CreateSessionIn creates session id with profile ("" for the first),
// seeing the memory blocks of agent ("" for the profile's) and of groups
// beyond the profile's.
func (c *Client) CreateSessionIn(ctx context.Context, id, profile, agent string, groups ...string) (*servicev1.SessionInfo, error) {
	res, err := c.Raw.CreateSession(ctx, connect.NewRequest(&servicev1.CreateSessionRequest{SessionId: id, Profile: profile, Agent: agent, Groups: groups}))
	if err != nil {
		return nil, fmt.Errorf("create session %q: %w", id, err)
	}
	return res.Msg, nil
}

// SetMembership names the agent ("" for the profile's) and the groups
// (beyond the profile's) whose blocks session id sees.
func (c *Client) SetMembership(ctx context.Context, id, agent string, groups ...string) (*servicev1.SessionInfo, error) {
	res, err := c.Raw.SetMembership(ctx, connect.NewRequest(&servicev1.SetMembershipRequest{SessionId: id, Agent: agent, Groups: groups}))
	if err != nil {
		return nil, fmt.Errorf("set membership of %q: %w", id, err)
	}
	return res.Msg, nil
}

// MemoryBlocks returns the current blocks of scopes, sorted by scope then
// label.
func (c *Client) MemoryBlocks(ctx context.Context, scopes ...string) ([]*servicev1.MemoryBlock, error) {
	res, err := c.Raw.ListMemoryBlocks(ctx, connect.NewRequest(&servicev1.ListMemoryBlocksRequest{Scopes: scopes}))
	if err != nil {
		return nil, fmt.Errorf("list memory blocks of %v: %w", scopes, err)
	}
	return res.Msg.Blocks, nil
}

// SessionMemory returns the blocks session id's turns show: one per
// label, the most specific scope's.
func (c *Client) SessionMemory(ctx context.Context, id string) ([]*servicev1.MemoryBlock, error) {
	res, err := c.Raw.ListMemoryBlocks(ctx, connect.NewRequest(&servicev1.ListMemoryBlocksRequest{SessionId: id, Visible: true}))
	if err != nil {
		return nil, fmt.Errorf("list memory blocks of session %q: %w", id, err)
	}
	return res.Msg.Blocks, nil
}

// MemoryBlock returns block label of scope (connect.CodeNotFound when
// there is none).
func (c *Client) MemoryBlock(ctx context.Context, scope, label string) (*servicev1.MemoryBlock, error) {
	res, err := c.Raw.GetMemoryBlock(ctx, connect.NewRequest(&servicev1.GetMemoryBlockRequest{Scope: scope, Label: label}))
	if err != nil {
		return nil, fmt.Errorf("get memory block %q of %s: %w", label, scope, err)
	}
	return res.Msg, nil
}

// PutMemoryBlock writes a whole block: over version expected (non-zero;
// connect.CodeAborted when the block is at another), or over whatever
// version it is at (0). A value over the block's limit is refused with
// connect.CodeInvalidArgument, the limit named.
func (c *Client) PutMemoryBlock(ctx context.Context, b *servicev1.MemoryBlock, expected uint64) (*servicev1.MemoryBlock, error) {
	res, err := c.Raw.PutMemoryBlock(ctx, connect.NewRequest(&servicev1.PutMemoryBlockRequest{Block: b, ExpectedVersion: expected}))
	if err != nil {
		return nil, fmt.Errorf("put memory block %q of %s: %w", b.GetLabel(), b.GetScope(), err)
	}
	return res.Msg, nil
}

// AppendMemoryBlock appends text to a block's value on a new line, as an
// operator (a read-only block takes it too).
func (c *Client) AppendMemoryBlock(ctx context.Context, scope, label, text string) (*servicev1.MemoryBlock, error) {
	return c.editMemoryBlock(ctx, &servicev1.EditMemoryBlockRequest{Scope: scope, Label: label, Op: "append", Text: text, Operator: true})
}

// ReplaceInMemoryBlock replaces the one occurrence of old in a block's
// value by new, as an operator.
func (c *Client) ReplaceInMemoryBlock(ctx context.Context, scope, label, old, new string) (*servicev1.MemoryBlock, error) {
	return c.editMemoryBlock(ctx, &servicev1.EditMemoryBlockRequest{Scope: scope, Label: label, Op: "replace", OldText: old, NewText: new, Operator: true})
}

func (c *Client) editMemoryBlock(ctx context.Context, req *servicev1.EditMemoryBlockRequest) (*servicev1.MemoryBlock, error) {
	res, err := c.Raw.EditMemoryBlock(ctx, connect.NewRequest(req))
	if err != nil {
		return nil, fmt.Errorf("%s memory block %q of %s: %w", req.Op, req.Label, req.Scope, err)
	}
	return res.Msg, nil
}

// DeleteMemoryBlock deletes a block (its versions are kept): over version
// expected, or whatever version it is at (0).
func (c *Client) DeleteMemoryBlock(ctx context.Context, scope, label string, expected uint64) error {
	_, err := c.Raw.DeleteMemoryBlock(ctx, connect.NewRequest(&servicev1.DeleteMemoryBlockRequest{Scope: scope, Label: label, ExpectedVersion: expected}))
	if err != nil {
		return fmt.Errorf("delete memory block %q of %s: %w", label, scope, err)
	}
	return nil
}

// MemoryBlockVersions returns every version of a block, oldest first.
func (c *Client) MemoryBlockVersions(ctx context.Context, scope, label string) ([]*servicev1.MemoryBlock, error) {
	res, err := c.Raw.ListMemoryBlockVersions(ctx, connect.NewRequest(&servicev1.GetMemoryBlockRequest{Scope: scope, Label: label}))
	if err != nil {
		return nil, fmt.Errorf("list versions of memory block %q of %s: %w", label, scope, err)
	}
	return res.Msg.Blocks, nil
}
