package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"

	"github.com/ctxhost/ctxhost/record"
)

// blockSchema creates the memory block tables when the file has none: a
// file written before blocks existed gains them without a schema version
// change, and earlier programs sharing the file go on ignoring them.
// memory_heads holds each block's current version; memory_blocks every
// version with its CRC-32C (data and sum NULL for a deleted one).
var blockSchema = []string{
	`CREATE TABLE IF NOT EXISTS memory_heads (
		scope BLOB NOT NULL,
		label BLOB NOT NULL,
		version INTEGER NOT NULL,
		deleted INTEGER NOT NULL,
		PRIMARY KEY (scope, label)
	) WITHOUT ROWID`,
	`CREATE TABLE IF NOT EXISTS memory_blocks (
		scope BLOB NOT NULL,
		label BLOB NOT NULL,
		version INTEGER NOT NULL,
		data BLOB,
		sum INTEGER,
		PRIMARY KEY (scope, label, version)
	) WITHOUT ROWID`,
}

var _ record.BlockStore = (*Store)(nil)

// initBlocks creates the block tables when missing.
func (s *Store) initBlocks(ctx context.Context) error {
	return s.write(ctx, func(tx *sql.Tx) error {
		for _, stmt := range blockSchema {
			if _, err := tx.ExecContext(ctx, stmt); err != nil {
				return fmt.Errorf("create memory block tables: %w", err)
			}
		}
		return nil
	})
}

// Blocks returns the current blocks of scopes, sorted by scope then label,
// read in one transaction; a damaged block fails with record.ErrDamaged.
func (s *Store) Blocks(ctx context.Context, scopes []string) ([]record.Block, error) {
	if len(scopes) == 0 {
		return nil, nil
	}
	args := make([]any, len(scopes))
	for i, sc := range scopes {
		args[i] = []byte(sc)
	}
	q := `SELECT h.scope, h.label, h.version, b.data, b.sum FROM memory_heads h
		JOIN memory_blocks b ON b.scope = h.scope AND b.label = h.label AND b.version = h.version
		WHERE h.deleted = 0 AND h.scope IN (?` + strings.Repeat(", ?", len(scopes)-1) + `)
		ORDER BY h.scope, h.label`
	st, err := s.prepared(ctx, q) // one statement per number of scopes, a handful
	if err != nil {
		return nil, fmt.Errorf("read memory blocks: %w", err)
	}
	rows, err := st.QueryContext(ctx, args...)
	if err != nil {
		return nil, fmt.Errorf("read memory blocks: %w", err)
	}
	defer rows.Close()
	var out []record.Block
	for rows.Next() {
		b, err := scanBlock(rows.Scan)
		if err != nil {
			return nil, fmt.Errorf("read memory blocks: %w", err)
		}
		out = append(out, b)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("read memory blocks: %w", err)
	}
	return out, nil
}

// scanBlock reads one row of (scope, label, version, data, sum).
func scanBlock(scan func(...any) error) (record.Block, error) {
	var scope, label, data []byte
	var sum sql.NullInt64
	var b record.Block
	if err := scan(&scope, &label, &b.Version, &data, &sum); err != nil {
		return b, err
	}
	b.Scope, b.Label = string(scope), string(label)
	if !sum.Valid { // a deleted version: no data, no sum
		b.Deleted = true
		return b, nil
	}
	if sum.Int64 != checksum(data) {
		return record.Block{}, fmt.Errorf("%w: block %q of %q, version %d, fails its checksum", record.ErrDamaged, b.Label, b.Scope, b.Version)
	}
	b.Data = nonNil(data)
	return b, nil
}

// PutBlock writes b as version expected+1 in one transaction that checks
// the block's current version.
func (s *Store) PutBlock(ctx context.Context, b record.Block, expected uint64) error {
	return s.PutBlockNoted(ctx, b, expected, nil)
}

// PutBlockNoted is PutBlock with events added to the feed in the same
// transaction.
func (s *Store) PutBlockNoted(ctx context.Context, b record.Block, expected uint64, events []record.FeedEvent) error {
	err := s.write(ctx, func(tx *sql.Tx) error {
		if err := s.writeBlock(ctx, tx, b.Scope, b.Label, expected, nonNil(b.Data)); err != nil {
			return err
		}
		return s.insertFeed(ctx, tx, "", 0, events)
	})
	if err != nil {
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
	err := s.write(ctx, func(tx *sql.Tx) error {
		if err := s.writeBlock(ctx, tx, scope, label, expected, nil); err != nil {
			return err
		}
		return s.insertFeed(ctx, tx, "", 0, events)
	})
	if err != nil {
		return fmt.Errorf("delete block %q of %q: %w", label, scope, err)
	}
	return nil
}

// writeBlock checks the head's version and writes version expected+1
// (data nil: deleted).
func (s *Store) writeBlock(ctx context.Context, tx *sql.Tx, scope, label string, expected uint64, data []byte) error {
	var current uint64
	var deleted bool
	err := tx.QueryRowContext(ctx, `SELECT version, deleted FROM memory_heads WHERE scope = ? AND label = ?`, []byte(scope), []byte(label)).
		Scan(&current, &deleted)
	switch {
	case errors.Is(err, sql.ErrNoRows):
		current, deleted = 0, true
	case err != nil:
		return err
	}
	if data == nil && deleted {
		return record.ErrBlockNotFound
	}
	if current != expected {
		return fmt.Errorf("at version %d, expected %d: %w", current, expected, record.ErrVersionConflict)
	}
	var sum any
	if data != nil {
		sum = checksum(data)
	}
	if _, err := s.exec(ctx, tx, `INSERT INTO memory_blocks (scope, label, version, data, sum) VALUES (?, ?, ?, ?, ?)`,
		[]byte(scope), []byte(label), expected+1, data, sum); err != nil {
		return err
	}
	_, err = s.exec(ctx, tx, `INSERT INTO memory_heads (scope, label, version, deleted) VALUES (?, ?, ?, ?)
		ON CONFLICT (scope, label) DO UPDATE SET version = excluded.version, deleted = excluded.deleted`,
		[]byte(scope), []byte(label), expected+1, data == nil)
	return err
}

// copyBlocks writes the current blocks of scope from as blocks of scope
// to in transaction tx, but over a block scope to holds (not deleted).
func (s *Store) copyBlocks(ctx context.Context, tx *sql.Tx, from, to string) error {
	if from == "" || to == "" || from == to {
		return nil
	}
	rows, err := tx.QueryContext(ctx, `SELECT h.scope, h.label, h.version, b.data, b.sum FROM memory_heads h
		JOIN memory_blocks b ON b.scope = h.scope AND b.label = h.label AND b.version = h.version
		WHERE h.deleted = 0 AND h.scope = ? ORDER BY h.label`, []byte(from))
	if err != nil {
		return fmt.Errorf("read the blocks of %q: %w", from, err)
	}
	var blocks []record.Block
	for rows.Next() {
		b, err := scanBlock(rows.Scan)
		if err != nil {
			rows.Close()
			return fmt.Errorf("read the blocks of %q: %w", from, err)
		}
		blocks = append(blocks, b)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return fmt.Errorf("read the blocks of %q: %w", from, err)
	}
	for _, b := range blocks {
		var current uint64
		var deleted bool
		err := tx.QueryRowContext(ctx, `SELECT version, deleted FROM memory_heads WHERE scope = ? AND label = ?`, []byte(to), []byte(b.Label)).
			Scan(&current, &deleted)
		switch {
		case errors.Is(err, sql.ErrNoRows):
			current = 0
		case err != nil:
			return err
		case !deleted:
			continue // the scope's own block stays
		}
		if err := s.writeBlock(ctx, tx, to, b.Label, current, b.Data); err != nil {
			return fmt.Errorf("copy block %q of %q to %q: %w", b.Label, from, to, err)
		}
	}
	return nil
}

// BlockVersions returns every stored version of the block, oldest first.
func (s *Store) BlockVersions(ctx context.Context, scope, label string) ([]record.Block, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT scope, label, version, data, sum FROM memory_blocks
		WHERE scope = ? AND label = ? ORDER BY version`, []byte(scope), []byte(label))
	if err != nil {
		return nil, fmt.Errorf("read versions of block %q of %q: %w", label, scope, err)
	}
	defer rows.Close()
	var out []record.Block
	for rows.Next() {
		b, err := scanBlock(rows.Scan)
		if err != nil {
			return nil, fmt.Errorf("read versions of block %q of %q: %w", label, scope, err)
		}
		out = append(out, b)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("read versions of block %q of %q: %w", label, scope, err)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("block %q of %q: %w", label, scope, record.ErrBlockNotFound)
	}
	return out, nil
}
