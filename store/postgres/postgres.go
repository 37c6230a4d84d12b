// Package postgres is a record.Store in a PostgreSQL database, through
// github.com/jackc/pgx/v5 (a connection pool).
//
// Any number of hosts may share one database. Every write is one
// transaction that checks the session's version on its row, which it
// locks (an UPDATE ... WHERE version = expected): of writers racing at one
// version exactly one wins, the others get record.ErrVersionConflict, and no
// update is lost. A successful Append or Snapshot is committed, so it is
// as durable as the server makes commits (with the default
// synchronous_commit=on, it survives a crash of the host and of the
// server). Load reads in one repeatable-read transaction, so it sees a
// consistent snapshot and log.
//
// The tables (ctxhost_schema_version, ctxhost_sessions, ctxhost_events,
// the memory block tables, and ctxhost_feed with its sequence
// ctxhost_feed_seq for the store-wide event feed of record.FeedStore)
// are created when a Store is opened, under an advisory lock so hosts
// starting at once do not race. They are created in the first schema of
// the connection's search_path, which the URL may set, e.g.
//
//	postgres://user@host/db?search_path=ctxhost
//
// keeps the store in schema ctxhost (created when missing); without it the
// server's default search_path applies (normally schema public). A
// database written by a newer schema version is refused; one of the first
// version is upgraded in place.
//
// Every snapshot and event is stored with its CRC-32C, checked when it is
// read: a damaged record or missing events fail Load with
// record.ErrDamaged, and nothing of the session is returned.
//
// Past versions are kept (record.CheckpointStore): a snapshot replaced by
// a later one moves to ctxhost_past_snapshots, events stay, checkpoint
// marks are in ctxhost_checkpoints and a fork's or rewind's first version
// is a row of ctxhost_links naming the version it stands on, so a fork
// writes a few rows whatever the session's size. Prune removes what the
// retention no longer keeps; it locks the session's row, and a fork of
// the session waits for it.
package postgres

import (
	"context"
	"errors"
	"fmt"
	"hash/crc32"
	"strings"

	"github.com/ctxhost/ctxhost/record"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
)

// schemaVersion is the version of the schema this package writes.
//
// Version 3 keeps past versions (checkpoints, forks, rewinds); a
// database of version 2 gains their tables in place. A program of
// version 2 refuses it: it would read a fork's first version as an empty
// snapshot.
const schemaVersion = 3

// schemaLockKey is the advisory lock key that serializes schema creation
// (any fixed number; it spells "ctxhost!" in ASCII).
const schemaLockKey = 0x6374786873742021

// Store is a record.Store in PostgreSQL. It is safe for concurrent use.
type Store struct {
	pool   *pgxpool.Pool
	schema string // "" for the search_path's default

	// Qualified table names.
	versionTable, sessions, events string
	// The memory block tables (see blockSchema).
	heads, blocks string
	// The event feed's table and sequence (see feedSchema); feedSeqName
	// is the sequence's name quoted as a string literal for nextval.
	feed, feedSeq, feedSeqName string
	// The checkpoint tables (see checkpointSchema) and the links' index.
	past, marks, links, linksIndex string
}

var _ interface {
	record.Store
	record.SessionLister
	Close() error
} = (*Store)(nil)

// New connects to the database at url (a postgres:// or postgresql://
// URL, or a key=value connection string, as pgx reads them) and creates
// the store's schema when it is missing. Close the Store when done.
func New(ctx context.Context, url string) (*Store, error) {
	cfg, err := pgxpool.ParseConfig(url)
	if err != nil {
		return nil, fmt.Errorf("postgres store: %w", err) // pgx keeps passwords out of its errors
	}
	s := &Store{schema: firstSchema(cfg.ConnConfig.RuntimeParams["search_path"])}
	qual := func(table string) string {
		if s.schema == "" {
			return pgx.Identifier{table}.Sanitize()
		}
		return pgx.Identifier{s.schema, table}.Sanitize()
	}
	s.versionTable, s.sessions, s.events = qual("ctxhost_schema_version"), qual("ctxhost_sessions"), qual("ctxhost_events")
	s.heads, s.blocks = qual("ctxhost_memory_heads"), qual("ctxhost_memory_blocks")
	s.feed, s.feedSeq = qual("ctxhost_feed"), qual("ctxhost_feed_seq")
	s.feedSeqName = strings.ReplaceAll(s.feedSeq, "'", "''")
	s.past, s.marks, s.links = qual("ctxhost_past_snapshots"), qual("ctxhost_checkpoints"), qual("ctxhost_links")
	s.linksIndex = "ctxhost_links_base"
	if s.pool, err = pgxpool.NewWithConfig(ctx, cfg); err != nil {
		return nil, fmt.Errorf("postgres store %s: %w", where(cfg), err)
	}
	if err := s.init(ctx); err != nil {
		s.pool.Close()
		return nil, fmt.Errorf("postgres store %s: %w", where(cfg), err)
	}
	return s, nil
}

// where names the server and database of cfg for messages (no password).
func where(cfg *pgxpool.Config) string {
	return fmt.Sprintf("%s:%d/%s", cfg.ConnConfig.Host, cfg.ConnConfig.Port, cfg.ConnConfig.Database)
}

// firstSchema returns the first schema named in a search_path value, or
// "" when it names none (or starts with "$user").
func firstSchema(searchPath string) string {
	first, _, _ := strings.Cut(searchPath, ",")
	first = strings.TrimSpace(first)
	if len(first) >= 2 && first[0] == '"' && first[len(first)-1] == '"' {
		return strings.ReplaceAll(first[1:len(first)-1], `""`, `"`)
	}
	if first == "$user" {
		return ""
	}
	return strings.ToLower(first) // unquoted identifiers fold to lower case
}

// Schema returns the schema the store's tables are in ("" for the
// server's default search_path).
func (s *Store) Schema() string { return s.schema }

// Claim accepts either use: a PostgreSQL database is always shared, and
// every call checks the session's stored version.
func (s *Store) Claim(bool) error { return nil }

// Close closes the store's connections. It returns nil; the error lets a
// Store be used as an io.Closer.
func (s *Store) Close() error {
	s.pool.Close()
	return nil
}

// init creates the schema, or checks the one the database holds.
func (s *Store) init(ctx context.Context) error {
	return pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock($1)`, int64(schemaLockKey)); err != nil {
			return fmt.Errorf("lock the schema: %w", err)
		}
		stmts := []string{
			`CREATE TABLE IF NOT EXISTS ` + s.versionTable + ` (version integer NOT NULL)`,
			// id is bytea so any session id, whatever its bytes (NUL, or
			// not UTF-8), is kept as it is and sorts bytewise.
			`CREATE TABLE IF NOT EXISTS ` + s.sessions + ` (
				id bytea PRIMARY KEY,
				version bigint NOT NULL,
				snapshot_version bigint NOT NULL,
				snapshot bytea NOT NULL
			)`,
			`CREATE TABLE IF NOT EXISTS ` + s.events + ` (
				session bytea NOT NULL,
				version bigint NOT NULL,
				data bytea NOT NULL,
				PRIMARY KEY (session, version)
			)`,
			// The CRC-32C of the snapshot and of each event (NULL in rows
			// written by the first schema version: not checked).
			`ALTER TABLE ` + s.sessions + ` ADD COLUMN IF NOT EXISTS snapshot_sum bigint`,
			`ALTER TABLE ` + s.events + ` ADD COLUMN IF NOT EXISTS sum bigint`,
		}
		stmts = append(stmts, s.blockSchema()...)
		stmts = append(stmts, s.feedSchema()...)
		stmts = append(stmts, s.checkpointSchema()...)
		if s.schema != "" {
			stmts = append([]string{`CREATE SCHEMA IF NOT EXISTS ` + pgx.Identifier{s.schema}.Sanitize()}, stmts...)
		}
		for _, stmt := range stmts {
			if _, err := tx.Exec(ctx, stmt); err != nil {
				return fmt.Errorf("create schema: %w", err)
			}
		}
		var v *int64
		if err := tx.QueryRow(ctx, `SELECT max(version) FROM `+s.versionTable).Scan(&v); err != nil {
			return fmt.Errorf("read schema version: %w", err)
		}
		switch {
		case v == nil:
			if _, err := tx.Exec(ctx, `INSERT INTO `+s.versionTable+` (version) VALUES ($1)`, schemaVersion); err != nil {
				return fmt.Errorf("write schema version: %w", err)
			}
		case *v > schemaVersion:
			return fmt.Errorf("the database has schema version %d; this program knows versions up to %d (upgrade it)", *v, schemaVersion)
		case *v < schemaVersion:
			if _, err := tx.Exec(ctx, `UPDATE `+s.versionTable+` SET version = $1`, schemaVersion); err != nil {
				return fmt.Errorf("write schema version: %w", err)
			}
		}
		return nil
	})
}

// Load reads the session's snapshot and the events after it in one
// repeatable-read transaction; nothing stored wraps record.ErrNotStored.
func (s *Store) Load(ctx context.Context, id string) (record.StoredSession, error) {
	var st record.StoredSession
	err := pgx.BeginTxFunc(ctx, s.pool, pgx.TxOptions{IsoLevel: pgx.RepeatableRead, AccessMode: pgx.ReadOnly}, func(tx pgx.Tx) error {
		var err error
		st, err = s.loadAt(ctx, tx, id, 0, 0)
		return err
	})
	if err != nil {
		return record.StoredSession{}, fmt.Errorf("load session %q: %w", id, err)
	}
	return st, nil
}

// Append adds event as version expected+1, in one transaction that locks
// the session's row at the expected version.
func (s *Store) Append(ctx context.Context, id string, expected uint64, event []byte) error {
	err := pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error { return s.appendTx(ctx, tx, id, expected, event) })
	if err != nil {
		return fmt.Errorf("append to session %q: %w", id, err)
	}
	return nil
}

// appendTx is Append's work in tx.
func (s *Store) appendTx(ctx context.Context, tx pgx.Tx, id string, expected uint64, event []byte) error {
	tag, err := tx.Exec(ctx, `UPDATE `+s.sessions+` SET version = version + 1 WHERE id = $1 AND version = $2`, []byte(id), int64(expected))
	if err != nil {
		return err
	}
	if tag.RowsAffected() == 0 {
		return s.conflict(ctx, tx, id, expected)
	}
	_, err = tx.Exec(ctx, `INSERT INTO `+s.events+` (session, version, data, sum) VALUES ($1, $2, $3, $4)`,
		[]byte(id), int64(expected+1), nonNil(event), checksum(event))
	return err
}

// Snapshot makes state the session's snapshot as version expected+1, in
// one transaction that locks the session's row at the expected version
// (or, for expected 0, inserts it); the snapshot and events it follows
// are kept as past versions (see Prune).
func (s *Store) Snapshot(ctx context.Context, id string, expected uint64, state []byte) error {
	err := pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error { return s.snapshotTx(ctx, tx, id, expected, state) })
	if err != nil {
		return fmt.Errorf("snapshot session %q: %w", id, err)
	}
	return nil
}

// snapshotTx is Snapshot's work in tx.
func (s *Store) snapshotTx(ctx context.Context, tx pgx.Tx, id string, expected uint64, state []byte) error {
	var sql string
	args := []any{[]byte(id), nonNil(state), checksum(state)}
	if expected == 0 {
		sql = `INSERT INTO ` + s.sessions + ` (id, version, snapshot_version, snapshot, snapshot_sum) VALUES ($1, 1, 1, $2, $3) ON CONFLICT (id) DO NOTHING`
	} else {
		if err := s.keepPast(ctx, tx, id, expected); err != nil {
			return err
		}
		sql = `UPDATE ` + s.sessions + ` SET version = $4::bigint + 1, snapshot_version = $4::bigint + 1, snapshot = $2, snapshot_sum = $3 WHERE id = $1 AND version = $4::bigint`
		args = append(args, int64(expected))
	}
	tag, err := tx.Exec(ctx, sql, args...)
	if err != nil {
		return err
	}
	if tag.RowsAffected() == 0 {
		return s.conflict(ctx, tx, id, expected)
	}
	if expected == 0 {
		return s.clearPast(ctx, tx, id)
	}
	return nil
}

// conflict returns the error for a write at expected that changed no row:
// the conflict with the stored version, or record.ErrNotStored for an append
// to a session not stored.
func (s *Store) conflict(ctx context.Context, tx pgx.Tx, id string, expected uint64) error {
	var stored int64
	err := tx.QueryRow(ctx, `SELECT version FROM `+s.sessions+` WHERE id = $1`, []byte(id)).Scan(&stored)
	switch {
	case errors.Is(err, pgx.ErrNoRows) && expected == 0:
		return fmt.Errorf("nothing stored to append to: %w", record.ErrNotStored)
	case errors.Is(err, pgx.ErrNoRows):
		return fmt.Errorf("not stored, expected version %d: %w", expected, record.ErrVersionConflict)
	case err != nil:
		return err
	}
	return fmt.Errorf("stored version %d, expected %d: %w", stored, expected, record.ErrVersionConflict)
}

// Delete removes the session and its events; nothing stored is not an
// error.
func (s *Store) Delete(ctx context.Context, id string) error {
	err := pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error { return s.deleteTx(ctx, tx, id) })
	if err != nil {
		return fmt.Errorf("delete session %q: %w", id, err)
	}
	return nil
}

// List returns the ids of the stored sessions, sorted bytewise.
func (s *Store) List(ctx context.Context) ([]string, error) {
	return s.queryIDs(ctx, "list sessions", `SELECT id FROM `+s.sessions+` ORDER BY id`)
}

// queryIDs runs query, whose rows are one session id each, and returns
// the ids in the rows' order; what names the query in its errors.
func (s *Store) queryIDs(ctx context.Context, what, query string) ([]string, error) {
	rows, err := s.pool.Query(ctx, query)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", what, err)
	}
	ids, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (string, error) {
		var id []byte
		err := r.Scan(&id)
		return string(id), err
	})
	if err != nil {
		return nil, fmt.Errorf("%s: %w", what, err)
	}
	return ids, nil
}

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// checksum is what the sum columns hold for data.
func checksum(data []byte) int64 { return int64(crc32.Checksum(data, castagnoli)) }

// nonNil returns b, or an empty slice for nil (stored as an empty bytea,
// not NULL).
func nonNil(b []byte) []byte {
	if b == nil {
		return []byte{}
	}
	return b
}
