package client

import (
	"context"
	"errors"
	"fmt"
	"time"

	"connectrpc.com/connect"

	"github.com/ctxhost/ctxhost/api/servicev1"
)

// FeedOptions choose what WatchFeed sends.
type FeedOptions struct {
	// After is the last sequence already seen: the feed resumes after it
	// (0: from the start of what the store holds).
	After uint64
	// FromNow starts at the feed's current end instead of After.
	FromNow bool
	// Session keeps one session's events ("": every session's and the
	// host's).
	Session string
	// Kinds keeps only these kinds (none: every kind).
	Kinds []string
	// Retry is the wait before reconnecting after the stream broke
	// (0: one second); the wait doubles up to a minute while the server
	// stays unreachable.
	Retry time.Duration
}

// WatchFeed calls fn with each event of the store's event feed (every
// session's, in the store-wide order of their sequences), then with each
// new one as it is written, until ctx ends (nil is returned) or fn
// returns an error (returned). When the stream breaks (the server
// restarted, the network failed) it reconnects after the last sequence
// fn got, so fn sees every event once, in order. An error the server
// answers that a retry cannot mend (a store with no feed, a bad
// argument, a refused token) is returned.
func (c *Client) WatchFeed(ctx context.Context, opts FeedOptions, fn func(*servicev1.FeedEvent) error) error {
	after, fromNow := opts.After, opts.FromNow
	wait := opts.Retry
	if wait <= 0 {
		wait = time.Second
	}
	for {
		stream, err := c.Raw.WatchFeed(ctx, connect.NewRequest(&servicev1.WatchFeedRequest{After: after, FromNow: fromNow,
			SessionId: opts.Session, Kinds: opts.Kinds}))
		got := false
		if err == nil {
			for stream.Receive() {
				ev := stream.Msg()
				if err := fn(ev); err != nil {
					stream.Close()
					return err
				}
				after, fromNow, got = ev.Sequence, false, true
			}
			err = stream.Err()
			stream.Close()
		}
		if ctx.Err() != nil {
			return nil
		}
		if err != nil && !retryable(err) {
			return fmt.Errorf("watch the event feed after %d: %w", after, err)
		}
		if got {
			wait = max(opts.Retry, time.Second)
		}
		select {
		case <-ctx.Done():
			return nil
		case <-time.After(wait):
		}
		wait = min(2*wait, time.Minute)
	}
}

// retryable tells whether a broken stream may be opened again.
func retryable(err error) bool {
	var ce *connect.Error
	if !errors.As(err, &ce) {
		return true
	}
	switch ce.Code() {
	case connect.CodeFailedPrecondition, connect.CodeInvalidArgument, connect.CodeUnauthenticated,
		connect.CodePermissionDenied, connect.CodeUnimplemented, connect.CodeNotFound:
		return false
	}
	return true
}
