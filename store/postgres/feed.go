package postgres

import (
	"context"
	"fmt"

	"github.com/ctxhost/ctxhost/record"
	"github.com/jackc/pgx/v5"
)

// feedLockKey is the advisory lock key that orders the feed's writers
// (any fixed number; it spells "ctxfeed!" in ASCII).
const feedLockKey = 0x6374786665656421

var _ record.FeedStore = (*Store)(nil)

// feedSchema creates the feed table when missing (no schema version
// change: earlier programs sharing the database ignore it).
//
// Sequences must grow in commit order, or a reader that has seen
// sequence n+1 could miss n committing later: a transaction that writes
// to the feed takes a transaction-level advisory lock (feedLockKey) just
// before it draws its sequences, holds it to its commit, and so commits
// before the next writer draws. Only writes with events take it, as
// their last statement.
func (s *Store) feedSchema() []string {
	return []string{
		`CREATE SEQUENCE IF NOT EXISTS ` + s.feedSeq,
		`CREATE TABLE IF NOT EXISTS ` + s.feed + ` (
			seq bigint PRIMARY KEY,
			session bytea NOT NULL,
			version bigint NOT NULL,
			kind text NOT NULL,
			data bytea NOT NULL,
			sum bigint NOT NULL,
			at timestamptz NOT NULL DEFAULT now()
		)`,
	}
}

// AppendNoted is Append with events added to the feed in the same
// transaction.
func (s *Store) AppendNoted(ctx context.Context, id string, expected uint64, event []byte, events []record.FeedEvent) error {
	err := pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
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
	err := pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
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
	err := pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error { return s.insertFeed(ctx, tx, "", 0, events) })
	if err != nil {
		return fmt.Errorf("publish %d events: %w", len(events), err)
	}
	return nil
}

// insertFeed adds events in tx under the feed's lock: at session id's
// version when id is not empty, else each at its own session with
// version 0. It must be tx's last statement (the lock is held to the
// commit).
func (s *Store) insertFeed(ctx context.Context, tx pgx.Tx, id string, version uint64, events []record.FeedEvent) error {
	if len(events) == 0 {
		return nil
	}
	if _, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock($1)`, int64(feedLockKey)); err != nil {
		return fmt.Errorf("lock the event feed: %w", err)
	}
	sessions := make([][]byte, len(events))
	kinds := make([]string, len(events))
	datas := make([][]byte, len(events))
	sums := make([]int64, len(events))
	for i, ev := range events {
		session := ev.Session
		if id != "" {
			session = id
		}
		sessions[i], kinds[i], datas[i], sums[i] = []byte(session), ev.Kind, nonNil(ev.Data), checksum(ev.Data)
	}
	// One statement for all of them; WITH ORDINALITY keeps their order.
	_, err := tx.Exec(ctx, `INSERT INTO `+s.feed+` (seq, session, version, kind, data, sum)
		SELECT nextval('`+s.feedSeqName+`'), e.session, $1, e.kind, e.data, e.sum
		FROM unnest($2::bytea[], $3::text[], $4::bytea[], $5::bigint[]) WITH ORDINALITY AS e(session, kind, data, sum, n)
		ORDER BY e.n`, int64(version), sessions, kinds, datas, sums)
	if err != nil {
		return fmt.Errorf("add %d events to the event feed: %w", len(events), err)
	}
	return nil
}

// ReadFeed returns at most limit events after sequence after, in order;
// an event that fails its checksum fails it with record.ErrDamaged.
func (s *Store) ReadFeed(ctx context.Context, after uint64, limit int) ([]record.FeedEvent, error) {
	if limit <= 0 {
		return nil, nil
	}
	rows, err := s.pool.Query(ctx, `SELECT seq, session, version, kind, data, sum, at FROM `+s.feed+` WHERE seq > $1 ORDER BY seq LIMIT $2`,
		int64(after), limit)
	if err != nil {
		return nil, fmt.Errorf("read the event feed after %d: %w", after, err)
	}
	defer rows.Close()
	var out []record.FeedEvent
	for rows.Next() {
		var ev record.FeedEvent
		var seq, version, sum int64
		var session []byte
		if err := rows.Scan(&seq, &session, &version, &ev.Kind, &ev.Data, &sum, &ev.At); err != nil {
			return nil, fmt.Errorf("read the event feed after %d: %w", after, err)
		}
		if sum != checksum(ev.Data) {
			return nil, fmt.Errorf("read the event feed: %w: event %d fails its checksum", record.ErrDamaged, seq)
		}
		ev.Sequence, ev.Version, ev.Session, ev.At = uint64(seq), uint64(version), string(session), ev.At.UTC()
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
	var n *int64
	if err := s.pool.QueryRow(ctx, `SELECT max(seq) FROM `+s.feed).Scan(&n); err != nil {
		return 0, fmt.Errorf("read the event feed's head: %w", err)
	}
	if n == nil {
		return 0, nil
	}
	return uint64(*n), nil
}
