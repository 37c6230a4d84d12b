package sqlite

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"errors"
	"fmt"
	"time"

	"github.com/ctxhost/ctxhost/record"
)

// checkpointSchema creates the tables that keep sessions' past versions
// (see record.CheckpointStore): the snapshots a later one replaced, the
// checkpoint marks, and the links (a snapshot that is another version's
// state: a fork's first version, a rewind). Past events stay in the
// events table. A session's current snapshot stays in snapshots, so Load
// of a session without links reads what it did.
var checkpointSchema = []string{
	`CREATE TABLE IF NOT EXISTS past_snapshots (
		session BLOB NOT NULL,
		version INTEGER NOT NULL,
		data BLOB NOT NULL,
		sum INTEGER,
		PRIMARY KEY (session, version)
	)`,
	`CREATE TABLE IF NOT EXISTS checkpoints (
		session BLOB NOT NULL,
		version INTEGER NOT NULL,
		at INTEGER NOT NULL,
		meta BLOB NOT NULL,
		PRIMARY KEY (session, version)
	) WITHOUT ROWID`,
	// The snapshot of (session, version) is version base_version of
	// session base.
	`CREATE TABLE IF NOT EXISTS links (
		session BLOB NOT NULL,
		version INTEGER NOT NULL,
		base BLOB NOT NULL,
		base_version INTEGER NOT NULL,
		PRIMARY KEY (session, version)
	) WITHOUT ROWID`,
	`CREATE INDEX IF NOT EXISTS links_base ON links (base, base_version)`,
}

var _ record.CheckpointStore = (*Store)(nil)

// initCheckpoints creates the checkpoint tables when missing.
func (s *Store) initCheckpoints(ctx context.Context) error {
	return s.write(ctx, func(tx *sql.Tx) error {
		for _, stmt := range checkpointSchema {
			if _, err := tx.ExecContext(ctx, stmt); err != nil {
				return fmt.Errorf("create checkpoint tables: %w", err)
			}
		}
		return nil
	})
}

// AppendMarked is Append with the new version marked as a checkpoint.
func (s *Store) AppendMarked(ctx context.Context, id string, expected uint64, event, meta []byte, events []record.FeedEvent) error {
	err := s.write(ctx, func(tx *sql.Tx) error {
		if err := s.appendTx(ctx, tx, id, expected, event); err != nil {
			return err
		}
		if err := s.mark(ctx, tx, id, expected+1, meta); err != nil {
			return err
		}
		return s.insertFeed(ctx, tx, id, expected+1, events)
	})
	if err != nil {
		return fmt.Errorf("append to session %q: %w", id, err)
	}
	return nil
}

// SnapshotMarked is Snapshot with the new version marked as a checkpoint.
func (s *Store) SnapshotMarked(ctx context.Context, id string, expected uint64, state, meta []byte, events []record.FeedEvent) error {
	err := s.write(ctx, func(tx *sql.Tx) error {
		if err := s.snapshotTx(ctx, tx, id, expected, state); err != nil {
			return err
		}
		if err := s.mark(ctx, tx, id, expected+1, meta); err != nil {
			return err
		}
		return s.insertFeed(ctx, tx, id, expected+1, events)
	})
	if err != nil {
		return fmt.Errorf("snapshot session %q: %w", id, err)
	}
	return nil
}

// mark marks version of session id as a checkpoint with meta.
func (s *Store) mark(ctx context.Context, tx *sql.Tx, id string, version uint64, meta []byte) error {
	_, err := s.exec(ctx, tx, `INSERT OR REPLACE INTO checkpoints (session, version, at, meta) VALUES (?, ?, ?, ?)`,
		[]byte(id), version, time.Now().UnixNano(), nonNil(meta))
	return err
}

// keepPast moves the current snapshot of session id, at the expected
// version, to the past snapshots (a later version is about to replace
// it). A session not at expected moves nothing: its write then fails.
func (s *Store) keepPast(ctx context.Context, tx *sql.Tx, id string, expected uint64) error {
	_, err := s.exec(ctx, tx, `INSERT OR REPLACE INTO past_snapshots (session, version, data, sum)
		SELECT p.session, ss.snapshot_version, p.data, p.sum FROM snapshots p JOIN sessions ss ON ss.id = p.session
		WHERE p.session = ? AND ss.version = ?`, []byte(id), expected)
	return err
}

// clearPast removes every past version of session id (a new session
// starts with none).
func clearPast(ctx context.Context, tx *sql.Tx, id string) error {
	for _, table := range []string{"events", "past_snapshots", "checkpoints", "links"} {
		if _, err := tx.ExecContext(ctx, `DELETE FROM `+table+` WHERE session = ?`, []byte(id)); err != nil {
			return err
		}
	}
	return nil
}

// Checkpoints returns the session's checkpoints, oldest first.
func (s *Store) Checkpoints(ctx context.Context, id string) ([]record.Checkpoint, error) {
	out, err := s.checkpoints(ctx, id)
	if err != nil {
		return nil, fmt.Errorf("checkpoints of session %q: %w", id, err)
	}
	return out, nil
}

func (s *Store) checkpoints(ctx context.Context, id string) ([]record.Checkpoint, error) {
	tx, err := s.db.BeginTx(ctx, &sql.TxOptions{ReadOnly: true})
	if err != nil {
		return nil, err
	}
	defer tx.Rollback()
	var version uint64
	err = tx.QueryRowContext(ctx, `SELECT version FROM sessions WHERE id = ?`, []byte(id)).Scan(&version)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, record.ErrNotStored
	}
	if err != nil {
		return nil, err
	}
	rows, err := tx.QueryContext(ctx, `SELECT version, at, meta FROM checkpoints WHERE session = ? AND version <= ? ORDER BY version`,
		[]byte(id), version)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := []record.Checkpoint{}
	for rows.Next() {
		var c record.Checkpoint
		var at int64
		if err := rows.Scan(&c.Version, &at, &c.Meta); err != nil {
			return nil, err
		}
		c.Time = time.Unix(0, at).UTC()
		out = append(out, c)
	}
	return out, rows.Err()
}

// LoadAt returns the session as it stood at version.
func (s *Store) LoadAt(ctx context.Context, id string, version uint64) (record.StoredSession, error) {
	if version == 0 {
		return record.StoredSession{}, fmt.Errorf("load session %q at version 0: %w", id, record.ErrNotKept)
	}
	tx, err := s.db.BeginTx(ctx, &sql.TxOptions{ReadOnly: true})
	if err != nil {
		return record.StoredSession{}, fmt.Errorf("load session %q at version %d: %w", id, version, err)
	}
	defer tx.Rollback()
	st, err := s.loadAt(ctx, tx, id, version, 0)
	if err != nil {
		return record.StoredSession{}, fmt.Errorf("load session %q at version %d: %w", id, version, err)
	}
	return st, nil
}

// head is a session's row.
type head struct {
	version, snapshotVersion uint64
}

// readHead reads session id's row; ok is false when there is none.
func readHead(ctx context.Context, tx *sql.Tx, id string) (h head, ok bool, err error) {
	err = tx.QueryRowContext(ctx, `SELECT version, snapshot_version FROM sessions WHERE id = ?`, []byte(id)).
		Scan(&h.version, &h.snapshotVersion)
	if errors.Is(err, sql.ErrNoRows) {
		return h, false, nil
	}
	return h, err == nil, err
}

// loadAt reads session id as it stood at version at (0: its current
// version), following links up to record.MaxLinks deep.
func (s *Store) loadAt(ctx context.Context, tx *sql.Tx, id string, at uint64, depth int) (st record.StoredSession, err error) {
	if depth > record.MaxLinks {
		return st, record.ErrLinks(id)
	}
	h, stored, err := readHead(ctx, tx, id)
	if err != nil {
		return st, err
	}
	current := at == 0 || (stored && at == h.version)
	switch {
	case at == 0 && !stored:
		return st, record.ErrNotStored
	case at == 0:
		at = h.version
	case stored && at > h.version:
		return st, fmt.Errorf("%w: the session is at version %d", record.ErrNotKept, h.version)
	}
	// The damage of a version not current is a version not kept: the
	// retention removes what only older versions need.
	gone := func(format string, args ...any) error {
		if current {
			return fmt.Errorf("%w: "+format, append([]any{record.ErrDamaged}, args...)...)
		}
		return fmt.Errorf("%w: "+format, append([]any{record.ErrNotKept}, args...)...)
	}
	var sum sql.NullInt64
	if stored && h.snapshotVersion <= at {
		st.SnapshotVersion = h.snapshotVersion
		err = tx.QueryRowContext(ctx, `SELECT data, sum FROM snapshots WHERE session = ?`, []byte(id)).Scan(&st.Snapshot, &sum)
	} else {
		err = tx.QueryRowContext(ctx, `SELECT version, data, sum FROM past_snapshots WHERE session = ? AND version <= ?
			ORDER BY version DESC LIMIT 1`, []byte(id), at).Scan(&st.SnapshotVersion, &st.Snapshot, &sum)
	}
	if errors.Is(err, sql.ErrNoRows) {
		if !stored {
			return st, fmt.Errorf("%w: nothing stored at version %d", record.ErrNotKept, at)
		}
		return st, gone("the snapshot of version %d is missing", h.snapshotVersion)
	}
	if err != nil {
		return st, err
	}
	if sum.Valid && sum.Int64 != checksum(st.Snapshot) {
		return record.StoredSession{}, fmt.Errorf("%w: the snapshot of version %d fails its checksum", record.ErrDamaged, st.SnapshotVersion)
	}
	if st.Snapshot == nil {
		st.Snapshot = []byte{}
	}
	var base []byte
	var baseVersion uint64
	switch err := tx.QueryRowContext(ctx, `SELECT base, base_version FROM links WHERE session = ? AND version = ?`,
		[]byte(id), st.SnapshotVersion).Scan(&base, &baseVersion); {
	case errors.Is(err, sql.ErrNoRows):
	case err != nil:
		return st, err
	default:
		b, err := s.loadAt(ctx, tx, string(base), baseVersion, depth+1)
		if err != nil {
			if errors.Is(err, record.ErrNotKept) || errors.Is(err, record.ErrNotStored) {
				return st, fmt.Errorf("%w: version %d stands on version %d of %q: %w", record.ErrDamaged, st.SnapshotVersion, baseVersion, base, err)
			}
			return st, err
		}
		st.Snapshot, st.Events, st.Base = b.Snapshot, b.Events, len(b.Events)
	}
	rows, err := tx.QueryContext(ctx, `SELECT version, data, sum FROM events WHERE session = ? AND version > ? AND version <= ? ORDER BY version`,
		[]byte(id), st.SnapshotVersion, at)
	if err != nil {
		return st, err
	}
	defer rows.Close()
	for rows.Next() {
		var v uint64
		var data []byte
		var sum sql.NullInt64
		if err := rows.Scan(&v, &data, &sum); err != nil {
			return st, err
		}
		if want := st.Version() + 1; v != want {
			return record.StoredSession{}, gone("event version %d where %d belongs", v, want)
		}
		if sum.Valid && sum.Int64 != checksum(data) {
			return record.StoredSession{}, fmt.Errorf("%w: event %d fails its checksum", record.ErrDamaged, v)
		}
		if data == nil {
			data = []byte{}
		}
		st.Events = append(st.Events, data)
	}
	if err := rows.Err(); err != nil {
		return st, err
	}
	if st.Version() != at {
		return record.StoredSession{}, gone("session at version %d, events up to %d", at, st.Version())
	}
	return st, nil
}

// kept checks, without reading it, that version at of session id can be
// read: the snapshot it starts from and its own event are stored (the
// retention keeps or removes a version's whole span at once).
func kept(ctx context.Context, tx *sql.Tx, id string, at uint64) error {
	h, stored, err := readHead(ctx, tx, id)
	switch {
	case err != nil:
		return err
	case !stored:
		return record.ErrNotStored
	case at == 0 || at > h.version:
		return fmt.Errorf("%w: version %d of a session at version %d", record.ErrNotKept, at, h.version)
	}
	var n int
	if h.snapshotVersion <= at {
		n = 1
	} else if err := tx.QueryRowContext(ctx, `SELECT count(*) FROM (SELECT 1 FROM past_snapshots WHERE session = ? AND version <= ? LIMIT 1)`,
		[]byte(id), at).Scan(&n); err != nil {
		return err
	}
	if n == 1 {
		var sv uint64
		if h.snapshotVersion <= at {
			sv = h.snapshotVersion
		} else if err := tx.QueryRowContext(ctx, `SELECT max(version) FROM past_snapshots WHERE session = ? AND version <= ?`,
			[]byte(id), at).Scan(&sv); err != nil {
			return err
		}
		if sv == at {
			return nil
		}
		if err := tx.QueryRowContext(ctx, `SELECT count(*) FROM events WHERE session = ? AND version = ?`, []byte(id), at).Scan(&n); err != nil {
			return err
		}
	}
	if n != 1 {
		return fmt.Errorf("%w: version %d", record.ErrNotKept, at)
	}
	return nil
}

// markOf returns the meta of session id's checkpoint at version (nil:
// not marked).
func markOf(ctx context.Context, tx *sql.Tx, id string, version uint64) ([]byte, error) {
	var meta []byte
	err := tx.QueryRowContext(ctx, `SELECT meta FROM checkpoints WHERE session = ? AND version = ?`, []byte(id), version).Scan(&meta)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, nil
	}
	return meta, err
}

// Fork stores session child as parent stood at version, in one
// transaction that writes a few rows whatever the parent's size.
func (s *Store) Fork(ctx context.Context, parent string, version uint64, child string, meta []byte) error {
	err := s.write(ctx, func(tx *sql.Tx) error { return s.forkTx(ctx, tx, parent, version, child, meta) })
	if err != nil {
		return fmt.Errorf("fork session %q at version %d as %q: %w", parent, version, child, err)
	}
	return nil
}

var _ record.ForkNoter = (*Store)(nil)

// ForkNoted is Fork with the blocks of scope from copied to scope to and
// events added to the feed, in the same transaction.
func (s *Store) ForkNoted(ctx context.Context, parent string, version uint64, child string, meta []byte, from, to string, events []record.FeedEvent) error {
	err := s.write(ctx, func(tx *sql.Tx) error {
		if err := s.forkTx(ctx, tx, parent, version, child, meta); err != nil {
			return err
		}
		if err := s.copyBlocks(ctx, tx, from, to); err != nil {
			return err
		}
		return s.insertFeed(ctx, tx, child, 1, events)
	})
	if err != nil {
		return fmt.Errorf("fork session %q at version %d as %q: %w", parent, version, child, err)
	}
	return nil
}

// forkTx is Fork in transaction tx.
func (s *Store) forkTx(ctx context.Context, tx *sql.Tx, parent string, version uint64, child string, meta []byte) error {
	if err := kept(ctx, tx, parent, version); err != nil {
		return fmt.Errorf("version %d of %q: %w", version, parent, err)
	}
	if meta == nil {
		var err error
		if meta, err = markOf(ctx, tx, parent, version); err != nil {
			return err
		}
	}
	res, err := tx.ExecContext(ctx, `INSERT INTO sessions (id, version, snapshot_version) VALUES (?, 1, 1) ON CONFLICT (id) DO NOTHING`, []byte(child))
	if err != nil {
		return err
	}
	if n, err := res.RowsAffected(); err != nil || n == 0 {
		if err == nil {
			err = fmt.Errorf("%w (end it first, or fork under another id)", record.ErrStored)
		}
		return err
	}
	if err := clearPast(ctx, tx, child); err != nil {
		return err
	}
	if err := s.linkTx(ctx, tx, child, 1, parent, version); err != nil {
		return err
	}
	if meta != nil {
		return s.mark(ctx, tx, child, 1, meta)
	}
	return nil
}

// linkTx makes (id, version)'s current snapshot stand on base's version.
func (s *Store) linkTx(ctx context.Context, tx *sql.Tx, id string, version uint64, base string, baseVersion uint64) error {
	if _, err := s.exec(ctx, tx, `INSERT INTO snapshots (session, data, sum) VALUES (?, ?, ?)
		ON CONFLICT (session) DO UPDATE SET data = excluded.data, sum = excluded.sum`, []byte(id), []byte{}, checksum(nil)); err != nil {
		return err
	}
	_, err := s.exec(ctx, tx, `INSERT OR REPLACE INTO links (session, version, base, base_version) VALUES (?, ?, ?, ?)`,
		[]byte(id), version, []byte(base), baseVersion)
	return err
}

// Rewind writes version expected+1 as the session stood at version to.
func (s *Store) Rewind(ctx context.Context, id string, expected, to uint64, meta []byte) error {
	err := s.write(ctx, func(tx *sql.Tx) error { return s.rewindTx(ctx, tx, id, expected, to, meta) })
	if err != nil {
		return fmt.Errorf("rewind session %q to version %d: %w", id, to, err)
	}
	return nil
}

// RewindNoted keeps session id at expected as branch (with the blocks of
// scope from copied to scope to, and events) and rewinds it to version
// to, in one transaction.
func (s *Store) RewindNoted(ctx context.Context, id string, expected, to uint64, meta []byte, branch, from, toScope string, events []record.FeedEvent) error {
	err := s.write(ctx, func(tx *sql.Tx) error {
		if err := s.forkTx(ctx, tx, id, expected, branch, nil); err != nil {
			return fmt.Errorf("keep what came after as %q: %w", branch, err)
		}
		if err := s.copyBlocks(ctx, tx, from, toScope); err != nil {
			return err
		}
		if err := s.rewindTx(ctx, tx, id, expected, to, meta); err != nil {
			return err
		}
		return s.insertFeed(ctx, tx, branch, 1, events)
	})
	if err != nil {
		return fmt.Errorf("rewind session %q to version %d: %w", id, to, err)
	}
	return nil
}

// rewindTx is Rewind in transaction tx.
func (s *Store) rewindTx(ctx context.Context, tx *sql.Tx, id string, expected, to uint64, meta []byte) error {
	if err := kept(ctx, tx, id, to); err != nil {
		return fmt.Errorf("version %d: %w", to, err)
	}
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
	if err := s.linkTx(ctx, tx, id, expected+1, id, to); err != nil {
		return err
	}
	if meta != nil {
		return s.mark(ctx, tx, id, expected+1, meta)
	}
	return nil
}

// versions returns the ints query (on one session) returns.
func versions(ctx context.Context, tx *sql.Tx, query string, args ...any) ([]uint64, error) {
	rows, err := tx.QueryContext(ctx, query, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []uint64
	for rows.Next() {
		var v uint64
		if err := rows.Scan(&v); err != nil {
			return nil, err
		}
		out = append(out, v)
	}
	return out, rows.Err()
}

// Prune removes the checkpoints r does not keep and what no kept version
// needs, in one transaction.
func (s *Store) Prune(ctx context.Context, id string, r record.Retention, now time.Time) (record.Pruned, error) {
	var p record.Pruned
	err := s.write(ctx, func(tx *sql.Tx) error {
		p = record.Pruned{}
		return s.prune(ctx, tx, id, r, now, &p)
	})
	if err != nil {
		return record.Pruned{}, fmt.Errorf("prune session %q: %w", id, err)
	}
	return p, nil
}

func (s *Store) prune(ctx context.Context, tx *sql.Tx, id string, r record.Retention, now time.Time, p *record.Pruned) error {
	h, stored, err := readHead(ctx, tx, id)
	if err != nil {
		return err
	}
	rows, err := tx.QueryContext(ctx, `SELECT version, at FROM checkpoints WHERE session = ? ORDER BY version`, []byte(id))
	if err != nil {
		return err
	}
	var marks []record.Checkpoint
	for rows.Next() {
		var c record.Checkpoint
		var at int64
		if err := rows.Scan(&c.Version, &at); err != nil {
			rows.Close()
			return err
		}
		c.Time = time.Unix(0, at)
		marks = append(marks, c)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return err
	}
	var keep []uint64
	if stored {
		keep = append(keep, h.version)
		if r.Keeps() {
			for _, c := range marks {
				keep = append(keep, c.Version)
			}
		} else {
			keep = append(keep, r.Kept(marks, now)...)
		}
	}
	pins, err := versions(ctx, tx, `SELECT base_version FROM links WHERE base = ?`, []byte(id))
	if err != nil {
		return err
	}
	keep = append(keep, pins...)
	snaps, err := versions(ctx, tx, `SELECT version FROM past_snapshots WHERE session = ?`, []byte(id))
	if err != nil {
		return err
	}
	if stored {
		snaps = append(snaps, h.snapshotVersion)
	}
	events, err := versions(ctx, tx, `SELECT version FROM events WHERE session = ?`, []byte(id))
	if err != nil {
		return err
	}
	needSnaps, needEvents := record.Needed(keep, snaps, events)
	kept := map[uint64]bool{}
	for _, v := range keep {
		kept[v] = true
	}
	var dropMarks, dropSnaps, dropEvents []uint64
	for _, c := range marks {
		if !kept[c.Version] {
			dropMarks = append(dropMarks, c.Version)
		}
	}
	for _, v := range snaps {
		if !needSnaps[v] && !(stored && v == h.snapshotVersion) {
			dropSnaps = append(dropSnaps, v)
		}
	}
	for _, v := range events {
		if !needEvents[v] {
			dropEvents = append(dropEvents, v)
		}
	}
	del := func(table string, vs []uint64) error {
		for _, rg := range record.Ranges(vs) {
			if _, err := tx.ExecContext(ctx, `DELETE FROM `+table+` WHERE session = ? AND version BETWEEN ? AND ?`, []byte(id), rg[0], rg[1]); err != nil {
				return err
			}
		}
		return nil
	}
	if err := del("checkpoints", dropMarks); err != nil {
		return err
	}
	if err := del("past_snapshots", dropSnaps); err != nil {
		return err
	}
	// A past snapshot's link goes with it (the current one's stays).
	if err := del("links", dropSnaps); err != nil {
		return err
	}
	if err := del("events", dropEvents); err != nil {
		return err
	}
	p.Checkpoints, p.Snapshots, p.Events = len(dropMarks), len(dropSnaps), len(dropEvents)
	return nil
}

// Pruneable returns the stored sessions' ids and those of deleted
// sessions whose versions are still kept, sorted bytewise.
func (s *Store) Pruneable(ctx context.Context) ([]string, error) {
	return s.queryIDs(ctx, "list sessions to prune", `SELECT id FROM sessions UNION SELECT session FROM past_snapshots UNION
		SELECT session FROM links ORDER BY 1`)
}

// deleteTx forgets session id. When forks of other sessions stand on its
// versions, those are kept under a new, hidden id (a NUL byte first) the
// links are moved to, until Prune finds nothing stands on them.
func (s *Store) deleteTx(ctx context.Context, tx *sql.Tx, id string) error {
	var n int
	if err := tx.QueryRowContext(ctx, `SELECT count(*) FROM (SELECT 1 FROM links WHERE base = ? AND session != ? LIMIT 1)`,
		[]byte(id), []byte(id)).Scan(&n); err != nil {
		return err
	}
	if n > 0 {
		h, stored, err := readHead(ctx, tx, id)
		if err != nil {
			return err
		}
		if stored {
			if err := s.keepPast(ctx, tx, id, h.version); err != nil {
				return err
			}
		}
		var b [8]byte
		rand.Read(b[:])
		tomb := []byte("\x00deleted\x00" + id + "\x00" + hex.EncodeToString(b[:]))
		for _, stmt := range []string{
			`UPDATE past_snapshots SET session = ? WHERE session = ?`,
			`UPDATE events SET session = ? WHERE session = ?`,
			`UPDATE links SET session = ? WHERE session = ?`,
			`UPDATE links SET base = ? WHERE base = ?`,
		} {
			if _, err := tx.ExecContext(ctx, stmt, tomb, []byte(id)); err != nil {
				return err
			}
		}
	}
	for _, table := range []string{"sessions", "snapshots"} {
		col := "session"
		if table == "sessions" {
			col = "id"
		}
		if _, err := tx.ExecContext(ctx, `DELETE FROM `+table+` WHERE `+col+` = ?`, []byte(id)); err != nil {
			return err
		}
	}
	return clearPast(ctx, tx, id)
}
