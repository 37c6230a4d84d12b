package postgres

import (
	"context"
	"errors"
	"fmt"

	"github.com/ctxhost/ctxhost/record"
	"github.com/jackc/pgx/v5"
)

var _ record.BlockStore = (*Store)(nil)

// blockSchema creates the memory block tables when missing (no schema
// version change: earlier programs sharing the database ignore them).
// ctxhost_memory_heads holds each block's current version (locked by
// every write of the block); ctxhost_memory_blocks every version with its
// CRC-32C (data and sum NULL for a deleted one).
func (s *Store) blockSchema() []string {
	return []string{
		`CREATE TABLE IF NOT EXISTS ` + s.heads + ` (
			scope bytea NOT NULL,
			label bytea NOT NULL,
			version bigint NOT NULL,
			deleted boolean NOT NULL,
			PRIMARY KEY (scope, label)
		)`,
		`CREATE TABLE IF NOT EXISTS ` + s.blocks + ` (
			scope bytea NOT NULL,
			label bytea NOT NULL,
			version bigint NOT NULL,
			data bytea,
			sum bigint,
			PRIMARY KEY (scope, label, version)
		)`,
	}
}

// Blocks returns the current blocks of scopes, sorted by scope then label.
func (s *Store) Blocks(ctx context.Context, scopes []string) ([]record.Block, error) {
	if len(scopes) == 0 {
		return nil, nil
	}
	keys := make([][]byte, len(scopes))
	for i, sc := range scopes {
		keys[i] = []byte(sc)
	}
	rows, err := s.pool.Query(ctx, `SELECT h.scope, h.label, h.version, b.data, b.sum FROM `+s.heads+` h
		JOIN `+s.blocks+` b ON b.scope = h.scope AND b.label = h.label AND b.version = h.version
		WHERE NOT h.deleted AND h.scope = ANY($1) ORDER BY h.scope, h.label`, keys)
	if err != nil {
		return nil, fmt.Errorf("read memory blocks: %w", err)
	}
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (record.Block, error) { return scanBlock(r.Scan) })
	if err != nil {
		return nil, fmt.Errorf("read memory blocks: %w", err)
	}
	return out, nil
}

// scanBlock reads one row of (scope, label, version, data, sum).
func scanBlock(scan func(...any) error) (record.Block, error) {
	var scope, label, data []byte
	var version int64
	var sum *int64
	if err := scan(&scope, &label, &version, &data, &sum); err != nil {
		return record.Block{}, err
	}
	b := record.Block{Scope: string(scope), Label: string(label), Version: uint64(version)}
	if sum == nil { // a deleted version: no data, no sum
		b.Deleted = true
		return b, nil
	}
	if *sum != checksum(data) {
		return record.Block{}, fmt.Errorf("%w: block %q of %q, version %d, fails its checksum", record.ErrDamaged, b.Label, b.Scope, b.Version)
	}
	b.Data = nonNil(data)
	return b, nil
}

// PutBlock writes b as version expected+1 in one transaction that locks
// the block's head at the expected version.
func (s *Store) PutBlock(ctx context.Context, b record.Block, expected uint64) error {
	return s.PutBlockNoted(ctx, b, expected, nil)
}

// PutBlockNoted is PutBlock with events added to the feed in the same
// transaction.
func (s *Store) PutBlockNoted(ctx context.Context, b record.Block, expected uint64, events []record.FeedEvent) error {
	if err := s.writeBlock(ctx, b.Scope, b.Label, expected, nonNil(b.Data), events); err != nil {
		return fmt.Errorf("write block %q of %q: %w", b.Label, b.Scope, err)
	}
	return nil
}

// DeleteBlock writes a deleted version as expected+1.
func (s *Store) DeleteBlock(ctx context.Context, scope, label string, expected uint64) error {
	return s.DeleteBlockNoted(ctx, scope, label, expected, nil)
}

// DeleteBlockNoted is DeleteBlock with events added to the feed in the
// same transaction.
func (s *Store) DeleteBlockNoted(ctx context.Context, scope, label string, expected uint64, events []record.FeedEvent) error {
	if err := s.writeBlock(ctx, scope, label, expected, nil, events); err != nil {
		return fmt.Errorf("delete block %q of %q: %w", label, scope, err)
	}
	return nil
}

// writeBlock moves the head from expected to expected+1 (inserting it for
// expected 0) and adds the version (data nil: deleted), and events to
// the feed. Of writers racing at one version the head's row lock (or its
// primary key) lets one win.
func (s *Store) writeBlock(ctx context.Context, scope, label string, expected uint64, data []byte, events []record.FeedEvent) error {
	return pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		var sql string
		if expected == 0 {
			sql = `INSERT INTO ` + s.heads + ` (scope, label, version, deleted) VALUES ($1, $2, 1, $3) ON CONFLICT (scope, label) DO NOTHING`
		} else {
			sql = `UPDATE ` + s.heads + ` SET version = version + 1, deleted = $3 WHERE scope = $1 AND label = $2 AND version = $4::bigint` +
				notDeleted(data == nil)
		}
		args := []any{[]byte(scope), []byte(label), data == nil}
		if expected != 0 {
			args = append(args, int64(expected))
		}
		if data == nil && expected == 0 {
			return record.ErrBlockNotFound
		}
		tag, err := tx.Exec(ctx, sql, args...)
		if err != nil {
			return err
		}
		if tag.RowsAffected() == 0 {
			return s.blockConflict(ctx, tx, scope, label, expected, data == nil)
		}
		var sum *int64
		if data != nil {
			c := checksum(data)
			sum = &c
		}
		if _, err = tx.Exec(ctx, `INSERT INTO `+s.blocks+` (scope, label, version, data, sum) VALUES ($1, $2, $3, $4, $5)`,
			[]byte(scope), []byte(label), int64(expected+1), data, sum); err != nil {
			return err
		}
		return s.insertFeed(ctx, tx, "", 0, events)
	})
}

// copyBlocks writes the current blocks of scope from as blocks of scope
// to in transaction tx, but over a block scope to holds (not deleted):
// each head of scope to is inserted at version 1, or moved on from a
// deleted version, under its row lock.
func (s *Store) copyBlocks(ctx context.Context, tx pgx.Tx, from, to string) error {
	if from == "" || to == "" || from == to {
		return nil
	}
	rows, err := tx.Query(ctx, `SELECT h.scope, h.label, h.version, b.data, b.sum FROM `+s.heads+` h
		JOIN `+s.blocks+` b ON b.scope = h.scope AND b.label = h.label AND b.version = h.version
		WHERE NOT h.deleted AND h.scope = $1 ORDER BY h.label`, []byte(from))
	if err != nil {
		return fmt.Errorf("read the blocks of %q: %w", from, err)
	}
	blocks, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (record.Block, error) { return scanBlock(r.Scan) })
	if err != nil {
		return fmt.Errorf("read the blocks of %q: %w", from, err)
	}
	for _, b := range blocks {
		var version int64
		err := tx.QueryRow(ctx, `INSERT INTO `+s.heads+` AS h (scope, label, version, deleted) VALUES ($1, $2, 1, false)
			ON CONFLICT (scope, label) DO UPDATE SET version = h.version + 1, deleted = false WHERE h.deleted
			RETURNING h.version`, []byte(to), []byte(b.Label)).Scan(&version)
		if errors.Is(err, pgx.ErrNoRows) {
			continue // the scope's own block stays
		}
		if err != nil {
			return fmt.Errorf("copy block %q of %q to %q: %w", b.Label, from, to, err)
		}
		if _, err := tx.Exec(ctx, `INSERT INTO `+s.blocks+` (scope, label, version, data, sum) VALUES ($1, $2, $3, $4, $5)`,
			[]byte(to), []byte(b.Label), version, b.Data, checksum(b.Data)); err != nil {
			return fmt.Errorf("copy block %q of %q to %q: %w", b.Label, from, to, err)
		}
	}
	return nil
}

// notDeleted restricts a delete to a head not deleted already.
func notDeleted(deleting bool) string {
	if deleting {
		return ` AND NOT deleted`
	}
	return ""
}

// blockConflict tells why a write at expected changed no head.
func (s *Store) blockConflict(ctx context.Context, tx pgx.Tx, scope, label string, expected uint64, deleting bool) error {
	var current int64
	var deleted bool
	err := tx.QueryRow(ctx, `SELECT version, deleted FROM `+s.heads+` WHERE scope = $1 AND label = $2`, []byte(scope), []byte(label)).
		Scan(&current, &deleted)
	switch {
	case errors.Is(err, pgx.ErrNoRows):
		current, deleted = 0, true
	case err != nil:
		return err
	}
	if deleting && deleted {
		return record.ErrBlockNotFound
	}
	return fmt.Errorf("at version %d, expected %d: %w", current, expected, record.ErrVersionConflict)
}

// BlockVersions returns every stored version of the block, oldest first.
func (s *Store) BlockVersions(ctx context.Context, scope, label string) ([]record.Block, error) {
	rows, err := s.pool.Query(ctx, `SELECT scope, label, version, data, sum FROM `+s.blocks+`
		WHERE scope = $1 AND label = $2 ORDER BY version`, []byte(scope), []byte(label))
	if err != nil {
		return nil, fmt.Errorf("read versions of block %q of %q: %w", label, scope, err)
	}
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (record.Block, error) { return scanBlock(r.Scan) })
	if err != nil {
		return nil, fmt.Errorf("read versions of block %q of %q: %w", label, scope, err)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("block %q of %q: %w", label, scope, record.ErrBlockNotFound)
	}
	return out, nil
}
