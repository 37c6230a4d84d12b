package postgres

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"time"

	"github.com/ctxhost/ctxhost/record"
	"github.com/jackc/pgx/v5"
)

var _ record.CheckpointStore = (*Store)(nil)

// checkpointSchema creates the tables that keep sessions' past versions
// (see record.CheckpointStore): the snapshots a later one replaced, the
// checkpoint marks, and the links (a snapshot that is another version's
// state: a fork's first version, a rewind). Past events stay in the
// events table; a session's current snapshot stays in its row.
func (s *Store) checkpointSchema() []string {
	return []string{
		`CREATE TABLE IF NOT EXISTS ` + s.past + ` (
			session bytea NOT NULL,
			version bigint NOT NULL,
			data bytea NOT NULL,
			sum bigint,
			PRIMARY KEY (session, version)
		)`,
		`CREATE TABLE IF NOT EXISTS ` + s.marks + ` (
			session bytea NOT NULL,
			version bigint NOT NULL,
			at bigint NOT NULL,
			meta bytea NOT NULL,
			PRIMARY KEY (session, version)
		)`,
		`CREATE TABLE IF NOT EXISTS ` + s.links + ` (
			session bytea NOT NULL,
			version bigint NOT NULL,
			base bytea NOT NULL,
			base_version bigint NOT NULL,
			PRIMARY KEY (session, version)
		)`,
		`CREATE INDEX IF NOT EXISTS ` + pgx.Identifier{s.linksIndex}.Sanitize() + ` ON ` + s.links + ` (base, base_version)`,
	}
}

// AppendMarked is Append with the new version marked as a checkpoint.
func (s *Store) AppendMarked(ctx context.Context, id string, expected uint64, event, meta []byte, events []record.FeedEvent) error {
	err := pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
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
	err := pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
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
func (s *Store) mark(ctx context.Context, tx pgx.Tx, id string, version uint64, meta []byte) error {
	_, err := tx.Exec(ctx, `INSERT INTO `+s.marks+` (session, version, at, meta) VALUES ($1, $2, $3, $4)
		ON CONFLICT (session, version) DO UPDATE SET at = excluded.at, meta = excluded.meta`,
		[]byte(id), int64(version), time.Now().UnixNano(), nonNil(meta))
	return err
}

// keepPast copies the current snapshot of session id, at the expected
// version, to the past snapshots (a later version is about to replace
// it). A session not at expected copies nothing: its write then fails.
func (s *Store) keepPast(ctx context.Context, tx pgx.Tx, id string, expected uint64) error {
	_, err := tx.Exec(ctx, `INSERT INTO `+s.past+` (session, version, data, sum)
		SELECT id, snapshot_version, snapshot, snapshot_sum FROM `+s.sessions+` WHERE id = $1 AND version = $2
		ON CONFLICT (session, version) DO UPDATE SET data = excluded.data, sum = excluded.sum`, []byte(id), int64(expected))
	return err
}

// clearPast removes every past version of session id.
func (s *Store) clearPast(ctx context.Context, tx pgx.Tx, id string) error {
	for _, table := range []string{s.events, s.past, s.marks, s.links} {
		if _, err := tx.Exec(ctx, `DELETE FROM `+table+` WHERE session = $1`, []byte(id)); err != nil {
			return err
		}
	}
	return nil
}

// Checkpoints returns the session's checkpoints, oldest first.
func (s *Store) Checkpoints(ctx context.Context, id string) ([]record.Checkpoint, error) {
	out := []record.Checkpoint{}
	err := pgx.BeginTxFunc(ctx, s.pool, pgx.TxOptions{IsoLevel: pgx.RepeatableRead, AccessMode: pgx.ReadOnly}, func(tx pgx.Tx) error {
		h, stored, err := s.readHead(ctx, tx, id, "")
		if err != nil {
			return err
		}
		if !stored {
			return record.ErrNotStored
		}
		rows, err := tx.Query(ctx, `SELECT version, at, meta FROM `+s.marks+` WHERE session = $1 AND version <= $2 ORDER BY version`,
			[]byte(id), int64(h.version))
		if err != nil {
			return err
		}
		out, err = pgx.CollectRows(rows, func(r pgx.CollectableRow) (record.Checkpoint, error) {
			var c record.Checkpoint
			var v, at int64
			err := r.Scan(&v, &at, &c.Meta)
			c.Version, c.Time = uint64(v), time.Unix(0, at).UTC()
			return c, err
		})
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("checkpoints of session %q: %w", id, err)
	}
	if out == nil {
		out = []record.Checkpoint{}
	}
	return out, nil
}

// head is a session's row.
type head struct {
	version, snapshotVersion uint64
}

// readHead reads session id's row (lock: "", "FOR SHARE" or "FOR
// UPDATE"); ok is false when there is none.
func (s *Store) readHead(ctx context.Context, tx pgx.Tx, id, lock string) (h head, ok bool, err error) {
	var v, sv int64
	err = tx.QueryRow(ctx, `SELECT version, snapshot_version FROM `+s.sessions+` WHERE id = $1 `+lock, []byte(id)).Scan(&v, &sv)
	if errors.Is(err, pgx.ErrNoRows) {
		return h, false, nil
	}
	return head{uint64(v), uint64(sv)}, err == nil, err
}

// LoadAt returns the session as it stood at version.
func (s *Store) LoadAt(ctx context.Context, id string, version uint64) (record.StoredSession, error) {
	if version == 0 {
		return record.StoredSession{}, fmt.Errorf("load session %q at version 0: %w", id, record.ErrNotKept)
	}
	var st record.StoredSession
	err := pgx.BeginTxFunc(ctx, s.pool, pgx.TxOptions{IsoLevel: pgx.RepeatableRead, AccessMode: pgx.ReadOnly}, func(tx pgx.Tx) error {
		var err error
		st, err = s.loadAt(ctx, tx, id, version, 0)
		return err
	})
	if err != nil {
		return record.StoredSession{}, fmt.Errorf("load session %q at version %d: %w", id, version, err)
	}
	return st, nil
}

// loadAt reads session id as it stood at version at (0: its current
// version), following links up to record.MaxLinks deep.
func (s *Store) loadAt(ctx context.Context, tx pgx.Tx, id string, at uint64, depth int) (st record.StoredSession, err error) {
	if depth > record.MaxLinks {
		return st, record.ErrLinks(id)
	}
	h, stored, err := s.readHead(ctx, tx, id, "")
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
	gone := func(format string, args ...any) error {
		if current {
			return fmt.Errorf("%w: "+format, append([]any{record.ErrDamaged}, args...)...)
		}
		return fmt.Errorf("%w: "+format, append([]any{record.ErrNotKept}, args...)...)
	}
	var sum *int64
	var sv int64
	if stored && h.snapshotVersion <= at {
		err = tx.QueryRow(ctx, `SELECT snapshot_version, snapshot, snapshot_sum FROM `+s.sessions+` WHERE id = $1`, []byte(id)).Scan(&sv, &st.Snapshot, &sum)
	} else {
		err = tx.QueryRow(ctx, `SELECT version, data, sum FROM `+s.past+` WHERE session = $1 AND version <= $2
			ORDER BY version DESC LIMIT 1`, []byte(id), int64(at)).Scan(&sv, &st.Snapshot, &sum)
	}
	if errors.Is(err, pgx.ErrNoRows) {
		return st, fmt.Errorf("%w: nothing stored at version %d", record.ErrNotKept, at)
	}
	if err != nil {
		return st, err
	}
	st.SnapshotVersion = uint64(sv)
	if sum != nil && *sum != checksum(st.Snapshot) {
		return record.StoredSession{}, fmt.Errorf("%w: the snapshot of version %d fails its checksum", record.ErrDamaged, sv)
	}
	if st.Snapshot == nil {
		st.Snapshot = []byte{}
	}
	var base []byte
	var baseVersion int64
	switch err := tx.QueryRow(ctx, `SELECT base, base_version FROM `+s.links+` WHERE session = $1 AND version = $2`,
		[]byte(id), sv).Scan(&base, &baseVersion); {
	case errors.Is(err, pgx.ErrNoRows):
	case err != nil:
		return st, err
	default:
		b, err := s.loadAt(ctx, tx, string(base), uint64(baseVersion), depth+1)
		if err != nil {
			if errors.Is(err, record.ErrNotKept) || errors.Is(err, record.ErrNotStored) {
				return st, fmt.Errorf("%w: version %d stands on version %d of %q: %w", record.ErrDamaged, sv, baseVersion, base, err)
			}
			return st, err
		}
		st.Snapshot, st.Events, st.Base = b.Snapshot, b.Events, len(b.Events)
	}
	rows, err := tx.Query(ctx, `SELECT version, data, sum FROM `+s.events+` WHERE session = $1 AND version > $2 AND version <= $3 ORDER BY version`,
		[]byte(id), sv, int64(at))
	if err != nil {
		return st, err
	}
	defer rows.Close()
	for rows.Next() {
		var v int64
		var data []byte
		var sum *int64
		if err := rows.Scan(&v, &data, &sum); err != nil {
			return st, err
		}
		if want := st.Version() + 1; uint64(v) != want {
			return record.StoredSession{}, gone("event version %d where %d belongs", v, want)
		}
		if sum != nil && *sum != checksum(data) {
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
// retention keeps or removes a version's whole span at once). It locks
// the session's row against a Prune (FOR SHARE).
func (s *Store) kept(ctx context.Context, tx pgx.Tx, id string, at uint64) error {
	h, stored, err := s.readHead(ctx, tx, id, "FOR SHARE")
	switch {
	case err != nil:
		return err
	case !stored:
		return record.ErrNotStored
	case at == 0 || at > h.version:
		return fmt.Errorf("%w: version %d of a session at version %d", record.ErrNotKept, at, h.version)
	}
	sv := int64(h.snapshotVersion)
	if h.snapshotVersion > at {
		var max *int64
		if err := tx.QueryRow(ctx, `SELECT max(version) FROM `+s.past+` WHERE session = $1 AND version <= $2`, []byte(id), int64(at)).Scan(&max); err != nil {
			return err
		}
		if max == nil {
			return fmt.Errorf("%w: version %d", record.ErrNotKept, at)
		}
		sv = *max
	}
	if uint64(sv) == at {
		return nil
	}
	var n int
	if err := tx.QueryRow(ctx, `SELECT count(*) FROM `+s.events+` WHERE session = $1 AND version = $2`, []byte(id), int64(at)).Scan(&n); err != nil {
		return err
	}
	if n != 1 {
		return fmt.Errorf("%w: version %d", record.ErrNotKept, at)
	}
	return nil
}

// markOf returns the meta of session id's checkpoint at version (nil:
// not marked).
func (s *Store) markOf(ctx context.Context, tx pgx.Tx, id string, version uint64) ([]byte, error) {
	var meta []byte
	err := tx.QueryRow(ctx, `SELECT meta FROM `+s.marks+` WHERE session = $1 AND version = $2`, []byte(id), int64(version)).Scan(&meta)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, nil
	}
	return meta, err
}

// Fork stores session child as parent stood at version, in one
// transaction that writes a few rows whatever the parent's size.
func (s *Store) Fork(ctx context.Context, parent string, version uint64, child string, meta []byte) error {
	err := pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error { return s.forkTx(ctx, tx, parent, version, child, meta) })
	if err != nil {
		return fmt.Errorf("fork session %q at version %d as %q: %w", parent, version, child, err)
	}
	return nil
}

var _ record.ForkNoter = (*Store)(nil)

// ForkNoted is Fork with the blocks of scope from copied to scope to and
// events added to the feed, in the same transaction.
func (s *Store) ForkNoted(ctx context.Context, parent string, version uint64, child string, meta []byte, from, to string, events []record.FeedEvent) error {
	err := pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
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
func (s *Store) forkTx(ctx context.Context, tx pgx.Tx, parent string, version uint64, child string, meta []byte) error {
	if err := s.kept(ctx, tx, parent, version); err != nil {
		return fmt.Errorf("version %d of %q: %w", version, parent, err)
	}
	if meta == nil {
		var err error
		if meta, err = s.markOf(ctx, tx, parent, version); err != nil {
			return err
		}
	}
	tag, err := tx.Exec(ctx, `INSERT INTO `+s.sessions+` (id, version, snapshot_version, snapshot, snapshot_sum) VALUES ($1, 1, 1, ''::bytea, $2)
		ON CONFLICT (id) DO NOTHING`, []byte(child), checksum(nil))
	if err != nil {
		return err
	}
	if tag.RowsAffected() == 0 {
		return fmt.Errorf("%w (end it first, or fork under another id)", record.ErrStored)
	}
	if err := s.clearPast(ctx, tx, child); err != nil {
		return err
	}
	if err := s.link(ctx, tx, child, 1, parent, version); err != nil {
		return err
	}
	if meta != nil {
		return s.mark(ctx, tx, child, 1, meta)
	}
	return nil
}

// link makes (id, version)'s snapshot stand on base's version.
func (s *Store) link(ctx context.Context, tx pgx.Tx, id string, version uint64, base string, baseVersion uint64) error {
	_, err := tx.Exec(ctx, `INSERT INTO `+s.links+` (session, version, base, base_version) VALUES ($1, $2, $3, $4)
		ON CONFLICT (session, version) DO UPDATE SET base = excluded.base, base_version = excluded.base_version`,
		[]byte(id), int64(version), []byte(base), int64(baseVersion))
	return err
}

// Rewind writes version expected+1 as the session stood at version to.
func (s *Store) Rewind(ctx context.Context, id string, expected, to uint64, meta []byte) error {
	err := pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error { return s.rewindTx(ctx, tx, id, expected, to, meta) })
	if err != nil {
		return fmt.Errorf("rewind session %q to version %d: %w", id, to, err)
	}
	return nil
}

// RewindNoted keeps session id at expected as branch (with the blocks of
// scope from copied to scope to, and events) and rewinds it to version
// to, in one transaction.
func (s *Store) RewindNoted(ctx context.Context, id string, expected, to uint64, meta []byte, branch, from, toScope string, events []record.FeedEvent) error {
	err := pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
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
func (s *Store) rewindTx(ctx context.Context, tx pgx.Tx, id string, expected, to uint64, meta []byte) error {
	if err := s.kept(ctx, tx, id, to); err != nil {
		return fmt.Errorf("version %d: %w", to, err)
	}
	if err := s.keepPast(ctx, tx, id, expected); err != nil {
		return err
	}
	tag, err := tx.Exec(ctx, `UPDATE `+s.sessions+` SET version = $2::bigint + 1, snapshot_version = $2::bigint + 1, snapshot = ''::bytea, snapshot_sum = $3
		WHERE id = $1 AND version = $2::bigint`, []byte(id), int64(expected), checksum(nil))
	if err != nil {
		return err
	}
	if tag.RowsAffected() == 0 {
		return s.conflict(ctx, tx, id, expected)
	}
	if err := s.link(ctx, tx, id, expected+1, id, to); err != nil {
		return err
	}
	if meta != nil {
		return s.mark(ctx, tx, id, expected+1, meta)
	}
	return nil
}

// versions returns the ints query returns.
func versions(ctx context.Context, tx pgx.Tx, query string, args ...any) ([]uint64, error) {
	rows, err := tx.Query(ctx, query, args...)
	if err != nil {
		return nil, err
	}
	return pgx.CollectRows(rows, func(r pgx.CollectableRow) (uint64, error) {
		var v int64
		err := r.Scan(&v)
		return uint64(v), err
	})
}

// Prune removes the checkpoints r does not keep and what no kept version
// needs, in one transaction that locks the session's row (a fork of it
// waits).
func (s *Store) Prune(ctx context.Context, id string, r record.Retention, now time.Time) (record.Pruned, error) {
	var p record.Pruned
	err := pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		p = record.Pruned{}
		return s.prune(ctx, tx, id, r, now, &p)
	})
	if err != nil {
		return record.Pruned{}, fmt.Errorf("prune session %q: %w", id, err)
	}
	return p, nil
}

func (s *Store) prune(ctx context.Context, tx pgx.Tx, id string, r record.Retention, now time.Time, p *record.Pruned) error {
	h, stored, err := s.readHead(ctx, tx, id, "FOR UPDATE")
	if err != nil {
		return err
	}
	rows, err := tx.Query(ctx, `SELECT version, at FROM `+s.marks+` WHERE session = $1 ORDER BY version`, []byte(id))
	if err != nil {
		return err
	}
	marks, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (record.Checkpoint, error) {
		var v, at int64
		err := r.Scan(&v, &at)
		return record.Checkpoint{Version: uint64(v), Time: time.Unix(0, at)}, err
	})
	if err != nil {
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
	pins, err := versions(ctx, tx, `SELECT base_version FROM `+s.links+` WHERE base = $1`, []byte(id))
	if err != nil {
		return err
	}
	keep = append(keep, pins...)
	snaps, err := versions(ctx, tx, `SELECT version FROM `+s.past+` WHERE session = $1`, []byte(id))
	if err != nil {
		return err
	}
	if stored {
		snaps = append(snaps, h.snapshotVersion)
	}
	events, err := versions(ctx, tx, `SELECT version FROM `+s.events+` WHERE session = $1`, []byte(id))
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
			if _, err := tx.Exec(ctx, `DELETE FROM `+table+` WHERE session = $1 AND version BETWEEN $2 AND $3`,
				[]byte(id), int64(rg[0]), int64(rg[1])); err != nil {
				return err
			}
		}
		return nil
	}
	for _, d := range []struct {
		table string
		vs    []uint64
	}{{s.marks, dropMarks}, {s.past, dropSnaps}, {s.links, dropSnaps}, {s.events, dropEvents}} {
		if err := del(d.table, d.vs); err != nil {
			return err
		}
	}
	p.Checkpoints, p.Snapshots, p.Events = len(dropMarks), len(dropSnaps), len(dropEvents)
	return nil
}

// Pruneable returns the stored sessions' ids and those of deleted
// sessions whose versions are still kept, sorted bytewise.
// Pruneable returns the stored sessions' ids and those of deleted
// sessions whose versions are still kept, sorted bytewise.
func (s *Store) Pruneable(ctx context.Context) ([]string, error) {
	return s.queryIDs(ctx, "list sessions to prune", `SELECT id FROM `+s.sessions+` UNION SELECT session FROM `+s.past+` UNION
		SELECT session FROM `+s.links+` ORDER BY 1`)
}

// deleteTx forgets session id. When forks of other sessions stand on its
// versions, those are kept under a new, hidden id (a NUL byte first) the
// links are moved to, until Prune finds nothing stands on them.
func (s *Store) deleteTx(ctx context.Context, tx pgx.Tx, id string) error {
	// The session's row first: its lock waits for a write in flight
	// (a fork of it included), whose rows the statements then see.
	h, stored, err := s.readHead(ctx, tx, id, "FOR UPDATE")
	if err != nil {
		return err
	}
	var pinned bool
	if err := tx.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM `+s.links+` WHERE base = $1 AND session != $1)`, []byte(id)).Scan(&pinned); err != nil {
		return err
	}
	if pinned {
		if stored {
			if err := s.keepPast(ctx, tx, id, h.version); err != nil {
				return err
			}
		}
		var b [8]byte
		rand.Read(b[:])
		tomb := []byte("\x00deleted\x00" + id + "\x00" + hex.EncodeToString(b[:]))
		for _, stmt := range []string{
			`UPDATE ` + s.past + ` SET session = $1 WHERE session = $2`,
			`UPDATE ` + s.events + ` SET session = $1 WHERE session = $2`,
			`UPDATE ` + s.links + ` SET session = $1 WHERE session = $2`,
			`UPDATE ` + s.links + ` SET base = $1 WHERE base = $2`,
		} {
			if _, err := tx.Exec(ctx, stmt, tomb, []byte(id)); err != nil {
				return err
			}
		}
	}
	if _, err := tx.Exec(ctx, `DELETE FROM `+s.sessions+` WHERE id = $1`, []byte(id)); err != nil {
		return err
	}
	return s.clearPast(ctx, tx, id)
}
