// Package sqlite is a record.Store in one SQLite database file, through the
// pure-Go modernc.org/sqlite driver (no cgo).
//
// The database runs in WAL mode with synchronous=FULL: a successful Append
// or Snapshot is committed and synced to disk before it returns, so it
// survives kill -9 and, as far as SQLite and the file system guarantee,
// power loss. Writes that arrive while another commits are committed
// together, in one transaction and one sync (group commit), each under a
// savepoint of its own so that one refused write does not undo the others:
// durability costs one sync per batch, not per write, however many
// sessions write at once. A transaction takes the write lock when it
// begins (BEGIN IMMEDIATE) and each write checks its session's version
// inside it, so several hosts (processes) may share one file on one machine:
// writers queue for the lock (waiting up to the busy timeout), a stale
// writer gets record.ErrVersionConflict, and no update is lost. Readers do
// not block writers. Do not put the file on a network file system: SQLite's
// locking is not reliable there.
//
// The schema (tables schema_version, sessions, snapshots and events; the
// memory block tables; feed, the store-wide event feed of
// record.FeedStore) is created when the file is first opened, and a file of the first schema
// is upgraded in place; a file written by a newer schema is refused. A
// session's row holds only its versions, so an append rewrites a few
// bytes, not the snapshot: an append costs the size of its event whatever
// the size of the session. Every snapshot and event is stored with its
// CRC-32C, checked when it is read: a damaged record, a missing snapshot
// or missing events fail Load with record.ErrDamaged, and nothing of the
// session is returned. The file (and its -wal and -shm companions) is
// created readable by its owner only (0600).
//
// Past versions are kept (record.CheckpointStore): a snapshot replaced by
// a later one moves to past_snapshots, events stay, checkpoint marks are
// in checkpoints and a fork's or rewind's first version is a row of links
// naming the version it stands on, so a fork writes a few rows whatever
// the session's size. Prune removes what the retention no longer keeps.
package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"hash/crc32"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/ctxhost/ctxhost/record"
	_ "modernc.org/sqlite" // registers the "sqlite" database/sql driver
)

// schemaVersion is the version of the schema this package writes.
//
// Version 3 keeps past versions (checkpoints, forks, rewinds); a file of
// version 2 gains their tables in place. A program of version 2 refuses
// it: it would read a fork's first version as an empty snapshot.
const schemaVersion = 3

// BusyTimeout is how long a write waits for another connection's (or
// process's) write lock before it fails.
const BusyTimeout = 30 * time.Second

// schema creates the tables of a new file.
var schema = []string{
	// id is a BLOB so any session id, whatever its bytes, is kept as it
	// is and sorts bytewise. The row is small: an append updates it.
	`CREATE TABLE sessions (
		id BLOB PRIMARY KEY,
		version INTEGER NOT NULL,
		snapshot_version INTEGER NOT NULL
	)`,
	// sum is the CRC-32C of data (NULL in rows of the first schema).
	`CREATE TABLE snapshots (
		session BLOB PRIMARY KEY,
		data BLOB NOT NULL,
		sum INTEGER
	)`,
	`CREATE TABLE events (
		session BLOB NOT NULL,
		version INTEGER NOT NULL,
		data BLOB NOT NULL,
		sum INTEGER,
		PRIMARY KEY (session, version)
	) WITHOUT ROWID`,
}

// upgradeFrom1 turns a file of the first schema (the snapshot in the
// session's row, no checksums) into the current one.
var upgradeFrom1 = []string{
	`CREATE TABLE snapshots (
		session BLOB PRIMARY KEY,
		data BLOB NOT NULL,
		sum INTEGER
	)`,
	`INSERT INTO snapshots (session, data, sum) SELECT id, snapshot, NULL FROM sessions`,
	`ALTER TABLE sessions DROP COLUMN snapshot`,
	`ALTER TABLE events ADD COLUMN sum INTEGER`,
	`UPDATE schema_version SET version = 3`,
}

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// checksum is what the sum column holds for data.
func checksum(data []byte) int64 { return int64(crc32.Checksum(data, castagnoli)) }

// Store is a record.Store in a SQLite file. It is safe for concurrent use,
// and several Stores (in one process or several) may share one file.
type Store struct {
	path string
	db   *sql.DB
	// The writes waiting for the committer (commitLoop); wake tells it
	// there are some, stopped is closed when it has ended.
	qmu     sync.Mutex
	queue   []*writeReq
	closed  bool
	wake    chan struct{}
	stopped chan struct{}
	// commits counts the transactions the committer has run (each one
	// sync of the log when it commits).
	commits atomic.Uint64
	// stmts are the statements prepared once (see prepared).
	stmtMu sync.Mutex
	stmts  map[string]*sql.Stmt
	// lock is the file Lock holds locked; alone tells whether exclusively.
	lockMu sync.Mutex
	lock   *os.File
	alone  bool
}

var _ interface {
	record.Store
	record.SessionLister
	Close() error
} = (*Store)(nil)

// New opens the database file at path, creating it (and its directory,
// 0700) when it does not exist, and makes sure it holds the store's
// schema. Close the Store when done.
func New(path string) (*Store, error) {
	if path == "" {
		return nil, errors.New("sqlite store: empty path")
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, fmt.Errorf("sqlite store %q: %w", path, err)
	}
	if err := os.MkdirAll(filepath.Dir(abs), 0o700); err != nil {
		return nil, fmt.Errorf("sqlite store %q: %w", path, err)
	}
	// Created here, empty, so that it is the owner's alone: SQLite gives
	// its -wal and -shm files the database file's permissions.
	if f, err := os.OpenFile(abs, os.O_RDWR|os.O_CREATE, 0o600); err != nil {
		return nil, fmt.Errorf("sqlite store %q: %w", path, err)
	} else {
		f.Close()
	}
	db, err := sql.Open("sqlite", dsn(abs))
	if err != nil {
		return nil, fmt.Errorf("sqlite store %q: %w", path, err)
	}
	s := &Store{path: abs, db: db, wake: make(chan struct{}, 1), stopped: make(chan struct{}), stmts: map[string]*sql.Stmt{}}
	go s.commitLoop()
	err = s.init(context.Background())
	if err == nil {
		err = s.initBlocks(context.Background())
	}
	if err == nil {
		err = s.initFeed(context.Background())
	}
	if err == nil {
		err = s.initCheckpoints(context.Background())
	}
	if err != nil {
		s.stop()
		db.Close()
		return nil, fmt.Errorf("sqlite store %q: %w", path, err)
	}
	return s, nil
}

// dsn returns the driver's data source name for the file at path: a
// file: URI (so a path holding '?' or '#' is read as a path) with the
// connection settings every connection of the pool gets.
func dsn(path string) string {
	esc := strings.NewReplacer("%", "%25", "?", "%3F", "#", "%23").Replace(filepath.ToSlash(path))
	if !strings.HasPrefix(esc, "/") {
		esc = "/" + esc // a Windows drive letter
	}
	q := url.Values{}
	q.Set("_txlock", "immediate") // read-only transactions still BEGIN DEFERRED
	q.Add("_pragma", fmt.Sprintf("busy_timeout(%d)", BusyTimeout.Milliseconds()))
	q.Add("_pragma", "journal_mode(WAL)")
	q.Add("_pragma", "synchronous(FULL)")
	return "file:" + esc + "?" + q.Encode()
}

// Path returns the database file's absolute path.
func (s *Store) Path() string { return s.path }

// Close commits the writes under way and closes the database.
func (s *Store) Close() error {
	defer s.unlock()
	s.stop()
	s.stmtMu.Lock()
	for _, st := range s.stmts {
		st.Close()
	}
	s.stmtMu.Unlock()
	if err := s.db.Close(); err != nil {
		return fmt.Errorf("close sqlite store %q: %w", s.path, err)
	}
	return nil
}

// stop ends the committer once the writes queued are committed; later
// writes fail.
func (s *Store) stop() {
	s.qmu.Lock()
	already := s.closed
	s.closed = true
	s.qmu.Unlock()
	if !already {
		select {
		case s.wake <- struct{}{}:
		default:
		}
	}
	<-s.stopped
}

// init creates the schema, or checks the one the file holds.
func (s *Store) init(ctx context.Context) error {
	return s.write(ctx, func(tx *sql.Tx) error {
		if _, err := tx.ExecContext(ctx, `CREATE TABLE IF NOT EXISTS schema_version (version INTEGER NOT NULL)`); err != nil {
			return fmt.Errorf("create schema: %w", err)
		}
		var nv sql.NullInt64
		if err := tx.QueryRowContext(ctx, `SELECT max(version) FROM schema_version`).Scan(&nv); err != nil {
			return fmt.Errorf("read schema version: %w", err)
		}
		run := func(what string, stmts []string) error {
			for _, stmt := range stmts {
				if _, err := tx.ExecContext(ctx, stmt); err != nil {
					return fmt.Errorf("%s: %w", what, err)
				}
			}
			return nil
		}
		switch v := nv.Int64; {
		case !nv.Valid:
			if err := run("create schema", schema); err != nil {
				return err
			}
			if _, err := tx.ExecContext(ctx, `INSERT INTO schema_version (version) VALUES (?)`, schemaVersion); err != nil {
				return fmt.Errorf("write schema version: %w", err)
			}
		case v == 1:
			return run("upgrade the schema from version 1", upgradeFrom1)
		case v == 2:
			return run("upgrade the schema from version 2", []string{`UPDATE schema_version SET version = 3`})
		case v > schemaVersion:
			return fmt.Errorf("the database has schema version %d; this program knows versions up to %d (upgrade it)", v, schemaVersion)
		}
		return nil
	})
}

// maxBatch bounds the writes one transaction commits together.
const maxBatch = 512

// writeReq is one write waiting for the committer: f runs inside the
// batch's transaction under a savepoint of its own.
type writeReq struct {
	ctx  context.Context
	f    func(tx *sql.Tx) error
	done chan error
}

// write runs f in a write transaction and returns once it is committed
// (synced) or refused. Writes that arrive while a transaction commits wait
// and are committed together by the next one (group commit): each runs
// under its own savepoint, so a write that fails is rolled back alone and
// the others still commit, and all of them share one sync of the
// database's log. The transaction is BEGIN IMMEDIATE: it holds the
// database's write lock from the start, so each write's reads are those
// of the version it writes over. Only other processes wait in SQLite's
// busy handler.
func (s *Store) write(ctx context.Context, f func(tx *sql.Tx) error) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	req := &writeReq{ctx: ctx, f: f, done: make(chan error, 1)}
	s.qmu.Lock()
	if s.closed {
		s.qmu.Unlock()
		return errors.New("the store is closed")
	}
	s.queue = append(s.queue, req)
	if len(s.queue) == 1 {
		select {
		case s.wake <- struct{}{}:
		default:
		}
	}
	s.qmu.Unlock()
	// Wait even when ctx ends: once taken into a batch the write may
	// commit, and the caller must not believe it did not.
	return <-req.done
}

// Syncs is how many transactions the store's committer has run, each
// committing a batch of concurrent writes with one sync of the database's
// log: the writes made over the syncs they took tell how well they shared
// them. Writes of other processes sharing the file are not counted.
func (s *Store) Syncs() uint64 { return s.commits.Load() }

// commitLoop is the committer: it commits the queued writes in batches
// until the Store is closed and the queue is empty.
func (s *Store) commitLoop() {
	defer close(s.stopped)
	for {
		s.qmu.Lock()
		for len(s.queue) == 0 {
			if s.closed {
				s.qmu.Unlock()
				return
			}
			s.qmu.Unlock()
			<-s.wake
			s.qmu.Lock()
		}
		n := min(len(s.queue), maxBatch)
		batch := s.queue[:n:n]
		s.queue = s.queue[n:]
		if len(s.queue) == 0 {
			s.queue = nil
		}
		s.qmu.Unlock()
		s.commits.Add(1)
		s.commit(batch)
	}
}

// commit runs batch in one transaction and answers every write: its own
// error, or the transaction's when it could not commit (then none of them
// did). Writes nearly always succeed, so the batch first runs as it is;
// only when a write fails is it run again with each write under a
// savepoint (commitEach), so that a refused write undoes only itself:
// two statements fewer a write on the common path.
func (s *Store) commit(batch []*writeReq) {
	// The transaction outlives any one caller: no caller's cancellation
	// may roll back the others' writes.
	ctx := context.Background()
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		answer(batch, nil, err)
		return
	}
	errs := make([]error, len(batch))
	for i, r := range batch {
		if errs[i] = r.ctx.Err(); errs[i] != nil {
			continue
		}
		if err := r.f(tx); err != nil {
			tx.Rollback()
			s.commitEach(batch)
			return
		}
	}
	answer(batch, errs, tx.Commit())
}

// commitEach runs batch in one transaction, each write under a savepoint.
func (s *Store) commitEach(batch []*writeReq) {
	ctx := context.Background()
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		answer(batch, nil, err)
		return
	}
	errs := make([]error, len(batch))
	for i, r := range batch {
		if err := r.ctx.Err(); err != nil {
			errs[i] = err
			continue
		}
		if _, err := tx.ExecContext(ctx, "SAVEPOINT w"); err != nil {
			tx.Rollback()
			answer(batch, nil, err)
			return
		}
		errs[i] = r.f(tx)
		undo := []string{"RELEASE w"}
		if errs[i] != nil {
			undo = []string{"ROLLBACK TO w", "RELEASE w"}
		}
		for _, stmt := range undo {
			if _, err := tx.ExecContext(ctx, stmt); err != nil {
				// SQLite rolls the whole transaction back after some
				// errors (a full disk, an I/O error): the write's own
				// error says why.
				if errs[i] != nil {
					err = errs[i]
				}
				tx.Rollback()
				answer(batch, nil, err)
				return
			}
		}
	}
	answer(batch, errs, tx.Commit())
}

// answer tells each write of batch its error: err for all when the
// transaction failed, else its own.
func answer(batch []*writeReq, errs []error, err error) {
	for i, r := range batch {
		if err != nil {
			r.done <- err
		} else {
			r.done <- errs[i]
		}
	}
}

// stmt is query prepared once for the store and bound to tx: the writes
// a committer runs by the thousand are not parsed again each time.
func (s *Store) stmt(ctx context.Context, tx *sql.Tx, query string) (*sql.Stmt, error) {
	st, err := s.prepared(ctx, query)
	if err != nil {
		return nil, err
	}
	return tx.StmtContext(ctx, st), nil
}

// prepared is query prepared once for the store: the reads every call
// makes (a session's version, its memory blocks) and the committer's
// writes are not parsed again each time (parsing a statement cost more
// than running it).
func (s *Store) prepared(ctx context.Context, query string) (*sql.Stmt, error) {
	s.stmtMu.Lock()
	st, ok := s.stmts[query]
	s.stmtMu.Unlock()
	if !ok {
		var err error
		if st, err = s.db.PrepareContext(ctx, query); err != nil {
			return nil, err
		}
		s.stmtMu.Lock()
		if old, ok := s.stmts[query]; ok {
			st.Close()
			st = old
		} else {
			s.stmts[query] = st
		}
		s.stmtMu.Unlock()
	}
	return st, nil
}

// exec runs query, prepared once (stmt), in tx.
func (s *Store) exec(ctx context.Context, tx *sql.Tx, query string, args ...any) (sql.Result, error) {
	st, err := s.stmt(ctx, tx, query)
	if err != nil {
		return nil, err
	}
	return st.ExecContext(ctx, args...)
}

// Load reads the session's snapshot and the events after it in one read
// transaction; nothing stored wraps record.ErrNotStored.
func (s *Store) Load(ctx context.Context, id string) (record.StoredSession, error) {
	st, err := s.load(ctx, id)
	if err != nil {
		return record.StoredSession{}, fmt.Errorf("load session %q: %w", id, err)
	}
	return st, nil
}

func (s *Store) load(ctx context.Context, id string) (record.StoredSession, error) {
	tx, err := s.db.BeginTx(ctx, &sql.TxOptions{ReadOnly: true})
	if err != nil {
		return record.StoredSession{}, err
	}
	defer tx.Rollback()
	return s.loadAt(ctx, tx, id, 0, 0)
}

// Append adds event as version expected+1, in one transaction that checks
// the stored version.
func (s *Store) Append(ctx context.Context, id string, expected uint64, event []byte) error {
	err := s.write(ctx, func(tx *sql.Tx) error { return s.appendTx(ctx, tx, id, expected, event) })
	if err != nil {
		return fmt.Errorf("append to session %q: %w", id, err)
	}
	return nil
}

// appendTx is Append's work in tx.
func (s *Store) appendTx(ctx context.Context, tx *sql.Tx, id string, expected uint64, event []byte) error {
	if err := s.bump(ctx, tx, id, expected, "UPDATE sessions SET version = version + 1 WHERE id = ? AND version = ?"); err != nil {
		return err
	}
	_, err := s.exec(ctx, tx, `INSERT INTO events (session, version, data, sum) VALUES (?, ?, ?, ?)`,
		[]byte(id), expected+1, nonNil(event), checksum(event))
	return err
}

// Snapshot makes state the session's snapshot as version expected+1, in
// one transaction that checks the stored version; the snapshot and events
// it follows are kept as past versions (see Prune).
func (s *Store) Snapshot(ctx context.Context, id string, expected uint64, state []byte) error {
	err := s.write(ctx, func(tx *sql.Tx) error { return s.snapshotTx(ctx, tx, id, expected, state) })
	if err != nil {
		return fmt.Errorf("snapshot session %q: %w", id, err)
	}
	return nil
}

// snapshotTx is Snapshot's work in tx.
func (s *Store) snapshotTx(ctx context.Context, tx *sql.Tx, id string, expected uint64, state []byte) error {
	if expected == 0 {
		res, err := tx.ExecContext(ctx, `INSERT INTO sessions (id, version, snapshot_version) VALUES (?, 1, 1)
			ON CONFLICT (id) DO NOTHING`, []byte(id))
		if err != nil {
			return err
		}
		if n, err := res.RowsAffected(); err != nil || n == 0 {
			return conflict(ctx, tx, id, expected, err)
		}
		if err := clearPast(ctx, tx, id); err != nil {
			return err
		}
	} else {
		if err := s.keepPast(ctx, tx, id, expected); err != nil {
			return err
		}
		res, err := s.exec(ctx, tx, `UPDATE sessions SET version = ?, snapshot_version = ? WHERE id = ? AND version = ?`,
			expected+1, expected+1, []byte(id), expected)
		if err != nil {
			return err
		}
		if n, err := res.RowsAffected(); err != nil || n == 0 {
			return conflict(ctx, tx, id, expected, err)
		}
	}
	_, err := s.exec(ctx, tx, `INSERT INTO snapshots (session, data, sum) VALUES (?, ?, ?)
		ON CONFLICT (session) DO UPDATE SET data = excluded.data, sum = excluded.sum`, []byte(id), nonNil(state), checksum(state))
	return err
}

// bump runs update (which moves the session's version on when it is
// expected) and returns the conflict when it changed nothing.
func (s *Store) bump(ctx context.Context, tx *sql.Tx, id string, expected uint64, update string) error {
	res, err := s.exec(ctx, tx, update, []byte(id), expected)
	if err != nil {
		return err
	}
	if n, err := res.RowsAffected(); err != nil || n == 0 {
		return conflict(ctx, tx, id, expected, err)
	}
	return nil
}

// conflict returns the error for a write at expected that changed no
// row: err, or the conflict with the stored version, or record.ErrNotStored
// for an append to a session not stored.
func conflict(ctx context.Context, tx *sql.Tx, id string, expected uint64, err error) error {
	if err != nil {
		return err
	}
	var stored uint64
	switch err := tx.QueryRowContext(ctx, `SELECT version FROM sessions WHERE id = ?`, []byte(id)).Scan(&stored); {
	case errors.Is(err, sql.ErrNoRows):
		if expected == 0 {
			return fmt.Errorf("nothing stored to append to: %w", record.ErrNotStored)
		}
		return fmt.Errorf("not stored, expected version %d: %w", expected, record.ErrVersionConflict)
	case err != nil:
		return err
	}
	return fmt.Errorf("stored version %d, expected %d: %w", stored, expected, record.ErrVersionConflict)
}

// Delete removes the session and its events; nothing stored is not an
// error.
func (s *Store) Delete(ctx context.Context, id string) error {
	err := s.write(ctx, func(tx *sql.Tx) error { return s.deleteTx(ctx, tx, id) })
	if err != nil {
		return fmt.Errorf("delete session %q: %w", id, err)
	}
	return nil
}

// List returns the ids of the stored sessions, sorted bytewise.
func (s *Store) List(ctx context.Context) ([]string, error) {
	return s.queryIDs(ctx, "list sessions", `SELECT id FROM sessions ORDER BY id`)
}

// queryIDs runs query, whose rows are one session id each, and returns
// the ids in the rows' order; what names the query in its errors.
func (s *Store) queryIDs(ctx context.Context, what, query string) ([]string, error) {
	rows, err := s.db.QueryContext(ctx, query)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", what, err)
	}
	defer rows.Close()
	var ids []string
	for rows.Next() {
		var id []byte
		if err := rows.Scan(&id); err != nil {
			return nil, fmt.Errorf("%s: %w", what, err)
		}
		ids = append(ids, string(id))
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("%s: %w", what, err)
	}
	return ids, nil
}

// nonNil returns b, or an empty slice for nil (stored as an empty BLOB,
// not NULL).
func nonNil(b []byte) []byte {
	if b == nil {
		return []byte{}
	}
	return b
}
