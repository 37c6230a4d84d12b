package sqlite

import (
	"context"
	"database/sql"
	"fmt"
	"strings"
	"time"

	"github.com/ctxhost/ctxhost/record"
)

// feedSchema creates the feed table when the file has none (no schema
// version change: earlier programs sharing the file ignore it). seq is
// AUTOINCREMENT, so a sequence is never used twice even after the last
// rows are deleted; the store has one writer at a time (the write lock
// is taken when a transaction begins), so sequences grow in commit order.
var feedSchema = []string{
	`CREATE TABLE IF NOT EXISTS feed (
		seq INTEGER PRIMARY KEY AUTOINCREMENT,
		session BLOB NOT NULL,
		version INTEGER NOT NULL,
		kind TEXT NOT NULL,
		data BLOB NOT NULL,
		sum INTEGER NOT NULL,
		at INTEGER NOT NULL
	)`,
}

var _ record.FeedStore = (*Store)(nil)

// initFeed creates the feed table when missing.
func (s *Store) initFeed(ctx context.Context) error {
	return s.write(ctx, func(tx *sql.Tx) error {
		for _, stmt := range feedSchema {
			if _, err := tx.ExecContext(ctx, stmt); err != nil {
				return fmt.Errorf("create the event feed table: %w", err)
			}
		}
		return nil
	})
}

// AppendNoted is Append with events added to the feed in the same
// transaction.
func (s *Store) AppendNoted(ctx context.Context, id string, expected uint64, event []byte, events []record.FeedEvent) error {
	err := s.write(ctx, func(tx *sql.Tx) error {
		if err := s.appendTx(ctx, tx, id, expected, event); err != nil {
			return err
		}
		return s.insertFeed(ctx, tx, id, expected+1, events)
	})
	if err != nil {
		return fmt.Errorf("append to session %q: %w", id, err)
	}
	return nil
}

// SnapshotNoted is Snapshot with events added to the feed in the same
// transaction.
func (s *Store) SnapshotNoted(ctx context.Context, id string, expected uint64, state []byte, events []record.FeedEvent) error {
	err := s.write(ctx, func(tx *sql.Tx) error {
		if err := s.snapshotTx(ctx, tx, id, expected, state); err != nil {
			return err
		}
		return s.insertFeed(ctx, tx, id, expected+1, events)
	})
	if err != nil {
		return fmt.Errorf("snapshot session %q: %w", id, err)
	}
	return nil
}

// Publish adds events to the feed on their own, in one transaction.
func (s *Store) Publish(ctx context.Context, events []record.FeedEvent) error {
	if len(events) == 0 {
		return nil
	}
	err := s.write(ctx, func(tx *sql.Tx) error { return s.insertFeed(ctx, tx, "", 0, events) })
	if err != nil {
		return fmt.Errorf("publish %d events: %w", len(events), err)
	}
	return nil
}

// insertFeed adds events in tx: at session id's version when id is not
// empty, else each at its own session with version 0. The rows go by
// statements of up to feedBatch rows each (a session's first save notes
// one event per message: a thousand single-row statements cost more than
// the snapshot beside them), in order, so sequences follow the events'.
func (s *Store) insertFeed(ctx context.Context, tx *sql.Tx, id string, version uint64, events []record.FeedEvent) error {
	at := time.Now().UnixNano()
	args := make([]any, 0, 6*min(len(events), feedBatch))
	for len(events) > 0 {
		n := feedBatch
		for n > len(events) {
			n /= 2
		}
		st, err := s.stmt(ctx, tx, feedInserts[n])
		if err != nil {
			return fmt.Errorf("add %s to the event feed: %w", events[0].Kind, err)
		}
		args = args[:0]
		for _, ev := range events[:n] {
			session := ev.Session
			if id != "" {
				session = id
			}
			args = append(args, []byte(session), version, ev.Kind, nonNil(ev.Data), checksum(ev.Data), at)
		}
		if _, err := st.ExecContext(ctx, args...); err != nil {
			return fmt.Errorf("add %s to the event feed: %w", events[0].Kind, err)
		}
		events = events[n:]
	}
	return nil
}

// feedBatch is the most rows insertFeed adds with one statement (a power
// of two: the rest goes by halves, so at most log2(feedBatch)+1 statements
// are prepared).
const feedBatch = 64

// feedInserts are the feed's insert statements by row count (powers of
// two).
var feedInserts [feedBatch + 1]string

func init() {
	for n := 1; n <= feedBatch; n *= 2 {
		q := `INSERT INTO feed (session, version, kind, data, sum, at) VALUES (?, ?, ?, ?, ?, ?)`
		feedInserts[n] = q + strings.Repeat(`, (?, ?, ?, ?, ?, ?)`, n-1)
	}
}

// ReadFeed returns at most limit events after sequence after, in order;
// an event that fails its checksum fails it with record.ErrDamaged.
func (s *Store) ReadFeed(ctx context.Context, after uint64, limit int) ([]record.FeedEvent, error) {
	if limit <= 0 {
		return nil, nil
	}
	rows, err := s.db.QueryContext(ctx, `SELECT seq, session, version, kind, data, sum, at FROM feed WHERE seq > ? ORDER BY seq LIMIT ?`, after, limit)
	if err != nil {
		return nil, fmt.Errorf("read the event feed after %d: %w", after, err)
	}
	defer rows.Close()
	var out []record.FeedEvent
	for rows.Next() {
		var ev record.FeedEvent
		var session []byte
		var sum, at int64
		if err := rows.Scan(&ev.Sequence, &session, &ev.Version, &ev.Kind, &ev.Data, &sum, &at); err != nil {
			return nil, fmt.Errorf("read the event feed after %d: %w", after, err)
		}
		if sum != checksum(ev.Data) {
			return nil, fmt.Errorf("read the event feed: %w: event %d fails its checksum", record.ErrDamaged, ev.Sequence)
		}
		ev.Session, ev.At = string(session), time.Unix(0, at).UTC()
		if ev.Data == nil {
			ev.Data = []byte{}
		}
		out = append(out, ev)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("read the event feed after %d: %w", after, err)
	}
	return out, nil
}

// FeedHead returns the feed's last sequence (0: empty).
func (s *Store) FeedHead(ctx context.Context) (uint64, error) {
	var n sql.NullInt64
	if err := s.db.QueryRowContext(ctx, `SELECT max(seq) FROM feed`).Scan(&n); err != nil {
		return 0, fmt.Errorf("read the event feed's head: %w", err)
	}
	return uint64(n.Int64), nil
}
