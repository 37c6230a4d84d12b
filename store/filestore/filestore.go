// Package filestore is a record.Store that keeps each session in two files
// of one directory: a snapshot, replaced atomically, and an append-only
// log of the events since, each append synced before it returns. Appends
// of concurrent sessions share their syncs (group commit).
package filestore

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"

	"github.com/ctxhost/ctxhost/record"
)

// File names of a session, after its escaped id.
const (
	snapshotExt = ".snapshot" // header line, then the state
	logExt      = ".log"      // records: header line, event, newline
	legacyExt   = ".json"     // a whole state, written by earlier versions
)

// snapshotHeader starts the snapshot files of the first format: the
// format and the version.
const snapshotHeader = "ctxhost-snapshot 1 version "

// snapshotHeader2 starts the snapshot files of the second format: the
// format, the version and the CRC-32C of the state ("ctxhost-snapshot 2
// version N crc32c XXXXXXXX"). A snapshot of this format promises a log
// file beside it (empty until the first append).
const snapshotHeader2 = "ctxhost-snapshot 2 version "

// snapshotHeader3 starts every snapshot file written now, as the second
// format does; it promises a log beside it that starts with a header (the
// log's witness).
const snapshotHeader3 = "ctxhost-snapshot 3 version "

// A log's header is its witness: two slots, each naming a version whose
// record the log held, synced, when the slot was written, with the
// CRC-32C of the slot. A log whose records end before the version its
// header names was cut (at a record boundary, or deleted and recreated).
// The slots take turns (version v writes slot v%2), so a slot torn by a
// crash leaves the other.
const (
	logMagic  = "ctxhost-log "
	slotLen   = len(logMagic) + 16 + 1 + 8 + 1 // magic, version, space, CRC-32C, newline
	headerLen = 2 * slotLen
)

// slot returns the header slot that names version v.
func slot(v uint64) []byte {
	b := fmt.Appendf(nil, "%s%016x ", logMagic, v)
	return fmt.Appendf(b, "%08x\n", crc32.Checksum(b, castagnoli))
}

// slotOffset is where the slot naming v is in the log.
func slotOffset(v uint64) int64 { return int64(v%2) * int64(slotLen) }

// header returns a whole header naming v in both slots.
func header(v uint64) []byte { return append(slot(v), slot(v)...) }

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// Store keeps sessions in a directory. A snapshot is written atomically
// (temporary file, fsync, rename, directory fsync); an event is appended
// to the log as one record (a header with its version, length and
// CRC-32C, then the bytes) and fsynced before Append returns, so an
// acknowledged save survives kill -9 and power loss. A record cut short by
// a crash during its append (never acknowledged) is dropped when the log is
// next read. A snapshot carries the CRC-32C of its state. A record or
// snapshot failing its checksum, or a log missing beside its snapshot,
// fails Load with record.ErrDamaged, and nothing of the session is
// returned.
//
// A directory belongs to one host at a time: the Store checks expected
// versions against what it read or wrote itself.
type Store struct {
	dir   string
	group *syncGroup

	mu       sync.Mutex
	sessions map[string]*session
}

// Syncs is how many syncs of the file system (or, where syncfs(2) is
// missing, rounds of file syncs) the store has begun: concurrent writes
// share one, so the writes made over the syncs they took tell how well
// they shared them.
func (f *Store) Syncs() uint64 { return f.group.syncs() }

// session is what the Store knows of one stored session.
type session struct {
	mu      sync.Mutex
	loaded  bool
	version uint64 // 0: nothing stored, or a legacy file only
	logSize int64  // bytes of the log's header and valid records
	torn    bool   // the log holds more than its valid records
	headed  bool   // the log starts with a header (a witness)
}

var _ record.Store = (*Store)(nil)

// New returns a store in dir, creating the directory (0700) when it does
// not exist. Temporary files a crashed host left behind (.tmp-*) are
// removed: a store directory belongs to one host at a time.
func New(dir string) (*Store, error) {
	if dir == "" {
		return nil, fmt.Errorf("file store: empty directory")
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("file store: %w", err)
	}
	stale, err := filepath.Glob(filepath.Join(dir, ".tmp-*"))
	if err != nil {
		return nil, fmt.Errorf("file store: %w", err)
	}
	for _, f := range stale {
		if err := os.Remove(f); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return nil, fmt.Errorf("file store: remove stale %s: %w", f, err)
		}
	}
	d, err := os.Open(dir)
	if err != nil {
		return nil, fmt.Errorf("file store: %w", err)
	}
	return &Store{dir: dir, group: newSyncGroup(d), sessions: map[string]*session{}}, nil
}

// Dir returns the store's directory.
func (f *Store) Dir() string { return f.dir }

// Files returns the files that hold sessionID: its snapshot, its log, and
// the single file earlier versions wrote (read, and removed by the next
// snapshot).
func (f *Store) Files(sessionID string) (snapshot, log, legacy string) {
	base := filepath.Join(f.dir, EscapeSessionID(sessionID))
	return base + snapshotExt, base + logExt, base + legacyExt
}

func (f *Store) session(id string) *session {
	f.mu.Lock()
	defer f.mu.Unlock()
	s, ok := f.sessions[id]
	if !ok {
		s = &session{}
		f.sessions[id] = s
	}
	return s
}

// Load reads the session's snapshot and the events after it; nothing
// stored wraps record.ErrNotStored.
func (f *Store) Load(_ context.Context, id string) (record.StoredSession, error) {
	s := f.session(id)
	s.mu.Lock()
	defer s.mu.Unlock()
	st, log, err := f.read(id)
	if err != nil {
		return record.StoredSession{}, fmt.Errorf("load session %q: %w", id, err)
	}
	s.loaded, s.version, s.logSize, s.torn, s.headed = true, st.Version(), log.size, true, log.headed
	return st, nil
}

// logInfo is what reading a log tells of it.
type logInfo struct {
	size   int64 // bytes of the header and the valid records
	headed bool  // it starts with a header
}

// read reads the session's files. A log that seems cut because another
// Store instance replaced the snapshot between the reads of the two files
// is read again, for as long as each new read finds a newer snapshot: a
// writer snapshotting back to back can overtake a slow reader many times
// in a row (seen under the race detector), and every retry needs the
// writer to have made progress, so the loop ends when the writer pauses
// (maxSnapshotRaces bounds it against a writer that never does).
func (f *Store) read(id string) (st record.StoredSession, log logInfo, err error) {
	for range maxSnapshotRaces {
		st, log, err = f.readOnce(id)
		var cut *cutError
		if !errors.As(err, &cut) {
			return st, log, err
		}
		snapPath, _, _ := f.Files(id)
		if v, err := snapshotVersion(snapPath); err != nil || v == cut.snapshot {
			break // the same snapshot: the log was cut
		}
	}
	return st, log, err
}

// maxSnapshotRaces bounds how often read starts again because a writer
// replaced the snapshot while it read.
const maxSnapshotRaces = 1000

// cutError is a log ending before the version its header names.
type cutError struct{ snapshot, end, witness uint64 }

func (e *cutError) Error() string {
	return fmt.Sprintf("the log ends at version %d but held version %d (it was cut)", e.end, e.witness)
}

// snapshotVersion reads the version in the snapshot file's first line.
func snapshotVersion(path string) (uint64, error) {
	file, err := os.Open(path)
	if err != nil {
		return 0, err
	}
	defer file.Close()
	line, err := bufio.NewReaderSize(file, 128).ReadSlice('\n')
	if err != nil {
		return 0, err
	}
	fields := strings.Fields(string(line)) // ctxhost-snapshot F version V ...
	if len(fields) < 4 || fields[2] != "version" {
		return 0, fmt.Errorf("bad snapshot header %q", line)
	}
	return strconv.ParseUint(fields[3], 10, 64)
}

// readOnce reads the session's files once.
func (f *Store) readOnce(id string) (st record.StoredSession, log logInfo, err error) {
	snapPath, logPath, legacyPath := f.Files(id)
	snap, err := os.ReadFile(snapPath)
	var promise logPromise
	switch {
	case err == nil:
		if st.SnapshotVersion, st.Snapshot, promise, err = parseSnapshot(snap); err != nil {
			return record.StoredSession{}, log, fmt.Errorf("%s: %w: %w", snapPath, record.ErrDamaged, err)
		}
	case errors.Is(err, fs.ErrNotExist):
		legacy, lerr := os.ReadFile(legacyPath)
		if lerr != nil && !errors.Is(lerr, fs.ErrNotExist) {
			return st, log, lerr
		}
		st.Snapshot = legacy // version 0
	default:
		return st, log, err
	}
	logData, err := os.ReadFile(logPath)
	if errors.Is(err, fs.ErrNotExist) && promise >= promiseLog {
		return record.StoredSession{}, log, fmt.Errorf("%s: %w: the log is missing", logPath, record.ErrDamaged)
	}
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return st, log, err
	}
	if st.Snapshot == nil {
		if len(logData) > 0 {
			return st, log, fmt.Errorf("%s: a log without a snapshot", logPath)
		}
		return st, log, record.ErrNotStored
	}
	events, log, witness, err := parseLog(logData, st.SnapshotVersion)
	if err == nil && promise >= promiseHeader && !log.headed {
		err = errors.New("the log's header is missing (the log was cut or replaced)")
	}
	if v := st.SnapshotVersion + uint64(len(events)); err == nil && v < witness {
		err = &cutError{snapshot: st.SnapshotVersion, end: v, witness: witness}
	}
	if err != nil {
		return record.StoredSession{}, logInfo{}, fmt.Errorf("%s: %w: %w", logPath, record.ErrDamaged, err)
	}
	st.Events = events
	return st, log, nil
}

// loaded makes sure s knows the stored version; the caller holds s.mu.
func (f *Store) ensureLoaded(id string, s *session) error {
	if s.loaded {
		return nil
	}
	st, log, err := f.read(id)
	if errors.Is(err, record.ErrNotStored) {
		s.loaded, s.version, s.logSize, s.headed = true, 0, 0, false
		return nil
	}
	if err != nil {
		return err
	}
	s.loaded, s.version, s.logSize, s.torn, s.headed = true, st.Version(), log.size, true, log.headed
	return nil
}

// Append writes event as one record at the end of the log and fsyncs it.
func (f *Store) Append(_ context.Context, id string, expected uint64, event []byte) error {
	s := f.session(id)
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := f.ensureLoaded(id, s); err != nil {
		return fmt.Errorf("append to session %q: %w", id, err)
	}
	if s.version != expected {
		return fmt.Errorf("append to session %q: stored version %d, expected %d: %w", id, s.version, expected, record.ErrVersionConflict)
	}
	_, logPath, _ := f.Files(id)
	size, err := f.appendRecord(logPath, s.logSize, s.torn, s.headed, expected+1, event)
	if err != nil {
		s.loaded = false // read the log again before the next append
		return fmt.Errorf("append to session %q: %w", id, err)
	}
	s.version, s.logSize, s.torn = expected+1, size, false
	return nil
}

// appendRecord writes one record at offset at (with cut: dropping
// anything after it, such as a record a crash cut short), waits for the
// group's sync, then names the version in the log's header (headed) for
// the next sync; it returns the new size.
func (f *Store) appendRecord(path string, at int64, cut, headed bool, version uint64, event []byte) (int64, error) {
	file, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE, 0o600)
	if err != nil {
		return 0, err
	}
	rec := fmt.Appendf(nil, "%d %d %08x\n", version, len(event), crc32.Checksum(event, castagnoli))
	rec = append(append(rec, event...), '\n')
	if cut { // first, so that a write cut short leaves a short record, never old bytes after it
		err = file.Truncate(at)
	}
	if err == nil {
		_, err = file.WriteAt(rec, at)
	}
	if err == nil {
		err = f.group.Sync(file) // the new file's entry too
	}
	if err == nil && headed {
		// Only now: the header never names a record that is not synced.
		if _, err = file.WriteAt(slot(version), slotOffset(version)); err == nil {
			f.group.Soon(path)
		}
	}
	if cerr := file.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return 0, err
	}
	return at + int64(len(rec)), nil
}

// Snapshot writes state atomically as the session's snapshot, then empties
// the log (whose records the snapshot includes; a crash in between leaves
// records Load skips by their version).
func (f *Store) Snapshot(_ context.Context, id string, expected uint64, state []byte) error {
	s := f.session(id)
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := f.ensureLoaded(id, s); err != nil {
		return fmt.Errorf("snapshot session %q: %w", id, err)
	}
	if s.version != expected {
		return fmt.Errorf("snapshot session %q: stored version %d, expected %d: %w", id, s.version, expected, record.ErrVersionConflict)
	}
	snapPath, logPath, legacyPath := f.Files(id)
	if !s.headed {
		// The new snapshot promises a log with a header: give the log
		// one first, keeping its records (the old snapshot still needs
		// them until the new one is in place).
		if err := f.headLog(logPath, expected, s.logSize); err != nil {
			s.loaded = false
			return fmt.Errorf("snapshot session %q: write the log's header: %w", id, err)
		}
		s.logSize += int64(headerLen)
		s.headed, s.torn = true, false
	}
	data := fmt.Appendf(nil, "%s%d crc32c %08x\n", snapshotHeader3, expected+1, crc32.Checksum(state, castagnoli))
	data = append(data, state...)
	if err := f.writeFileAtomic(snapPath, data); err != nil {
		return fmt.Errorf("snapshot session %q: %w", id, err)
	}
	s.version = expected + 1
	// The log's records are all in the snapshot now: a crash before this
	// is synced leaves them, skipped by their versions.
	if err := resetLog(logPath, expected+1); err != nil {
		s.loaded = false
		return fmt.Errorf("snapshot session %q: empty the log: %w", id, err)
	}
	f.group.Soon(logPath)
	s.logSize, s.torn = int64(headerLen), false
	if err := os.Remove(legacyPath); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("snapshot session %q: remove the old-format file: %w", id, err)
	}
	return nil
}

// Delete removes the session's files; nothing stored is not an error.
func (f *Store) Delete(_ context.Context, id string) error {
	s := f.session(id)
	s.mu.Lock()
	defer s.mu.Unlock()
	snapPath, logPath, legacyPath := f.Files(id)
	for _, p := range []string{snapPath, logPath, legacyPath} {
		if err := os.Remove(p); err != nil && !errors.Is(err, fs.ErrNotExist) {
			s.loaded = false
			return fmt.Errorf("delete session %q: %w", id, err)
		}
	}
	s.loaded, s.version, s.logSize, s.headed = true, 0, 0, false
	if err := f.group.Sync(nil); err != nil {
		return fmt.Errorf("delete session %q: %w", id, err)
	}
	return nil
}

// logPromise is what a snapshot promises of the log beside it.
type logPromise int

const (
	promiseNothing logPromise = iota // the first format: a log, or none
	promiseLog                       // a log, maybe empty
	promiseHeader                    // a log with a header
)

// parseSnapshot reads a snapshot file: its version and state, checked
// against its checksum, and what it promises of the log.
func parseSnapshot(data []byte) (version uint64, state []byte, promise logPromise, err error) {
	line, rest, ok := bytes.Cut(data, []byte("\n"))
	switch {
	case ok && (bytes.HasPrefix(line, []byte(snapshotHeader3)) || bytes.HasPrefix(line, []byte(snapshotHeader2))):
		promise = promiseHeader
		if bytes.HasPrefix(line, []byte(snapshotHeader2)) {
			promise = promiseLog
		}
		var sum uint32
		if _, err := fmt.Sscanf(string(line[len(snapshotHeader2):]), "%d crc32c %08x", &version, &sum); err != nil || version == 0 {
			return 0, nil, 0, fmt.Errorf("bad snapshot header %q", line)
		}
		if crc32.Checksum(rest, castagnoli) != sum {
			return 0, nil, 0, fmt.Errorf("the snapshot of version %d fails its checksum", version)
		}
		return version, rest, promise, nil
	case ok && bytes.HasPrefix(line, []byte(snapshotHeader)):
		v, err := strconv.ParseUint(string(line[len(snapshotHeader):]), 10, 64)
		if err != nil || v == 0 {
			return 0, nil, 0, fmt.Errorf("snapshot version %q", line[len(snapshotHeader):])
		}
		return v, rest, promiseNothing, nil
	}
	return 0, nil, 0, fmt.Errorf("not a snapshot (want a first line %q)", snapshotHeader3+"N crc32c X")
}

// headLog gives the log at path a header naming version, followed by its
// first size bytes of records (none when it does not exist), replacing it
// atomically.
func (f *Store) headLog(path string, version uint64, size int64) error {
	data := header(version)
	if size > 0 {
		old, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		if int64(len(old)) < size {
			return fmt.Errorf("the log is shorter (%d bytes) than its records (%d)", len(old), size)
		}
		data = append(data, old[:size]...)
	}
	return f.writeFileAtomic(path, data)
}

// resetLog leaves the log at path with only a header naming version.
func resetLog(path string, version uint64) error {
	file, err := os.OpenFile(path, os.O_WRONLY, 0)
	if err != nil {
		return err
	}
	err = file.Truncate(int64(headerLen))
	if err == nil {
		_, err = file.WriteAt(header(version), 0)
	}
	return errors.Join(err, file.Close())
}

// parseLog returns the events after version from, checking every record,
// and the version the log's header names (0 without a header). A last
// record that is incomplete was cut short by a crash while it was
// appended (it was never acknowledged) and is left out; a complete one
// failing its checksum is damage, and so is a header with no valid slot.
func parseLog(data []byte, from uint64) (events [][]byte, log logInfo, witness uint64, err error) {
	var off int64
	if bytes.HasPrefix(data, []byte(logMagic)) {
		if len(data) < headerLen {
			return nil, log, 0, fmt.Errorf("the log's header is cut short (%d bytes)", len(data))
		}
		valid := false
		for i := range 2 {
			if v, ok := parseSlot(data[i*slotLen : (i+1)*slotLen]); ok {
				valid, witness = true, max(witness, v)
			}
		}
		if !valid {
			return nil, log, 0, errors.New("the log's header fails its checksums")
		}
		log.headed, off = true, int64(headerLen)
	}
	log.size = off
	events, size, err := parseRecords(data[off:], from)
	log.size += size
	return events, log, witness, err
}

// parseSlot reads one header slot.
func parseSlot(b []byte) (uint64, bool) {
	body := b[:len(logMagic)+17]
	var v uint64
	var sum uint32
	if _, err := fmt.Sscanf(string(b[len(logMagic):]), "%016x %08x\n", &v, &sum); err != nil {
		return 0, false
	}
	return v, crc32.Checksum(body, castagnoli) == sum
}

// parseRecords returns the events after version from in the records of
// data; size is the length of the valid records.
func parseRecords(data []byte, from uint64) (events [][]byte, size int64, err error) {
	r := bufio.NewReader(bytes.NewReader(data))
	var off int64
	want := from + 1
	for off < int64(len(data)) {
		v, event, n, err := readRecord(r)
		if err != nil {
			if errors.Is(err, io.ErrUnexpectedEOF) {
				break // torn tail
			}
			return nil, 0, fmt.Errorf("record at byte %d: %w", off, err)
		}
		off += n
		size = off
		if v <= from {
			continue // included in the snapshot
		}
		if v != want {
			return nil, 0, fmt.Errorf("record at byte %d: version %d, want %d", off-n, v, want)
		}
		events = append(events, event)
		want++
	}
	return events, size, nil
}

// readRecord reads one record and its length in bytes.
func readRecord(r *bufio.Reader) (version uint64, event []byte, n int64, err error) {
	header, err := r.ReadString('\n')
	n = int64(len(header))
	if err != nil {
		return 0, nil, n, io.ErrUnexpectedEOF
	}
	var length int
	var sum uint32
	if _, err := fmt.Sscanf(strings.TrimSuffix(header, "\n"), "%d %d %08x", &version, &length, &sum); err != nil || length < 0 {
		return 0, nil, n, fmt.Errorf("bad record header %q", strings.TrimSpace(header))
	}
	buf := make([]byte, length+1)
	m, err := io.ReadFull(r, buf)
	n += int64(m)
	if err != nil {
		return 0, nil, n, io.ErrUnexpectedEOF
	}
	event = buf[:length]
	if buf[length] != '\n' || crc32.Checksum(event, castagnoli) != sum {
		return 0, nil, n, fmt.Errorf("record %d fails its checksum", version)
	}
	return version, event, n, nil
}

// writeFileAtomic writes data to path through a temporary file in the
// store's directory, synced with the group before and after the rename;
// on any failure the temporary file is removed and path is untouched.
func (f *Store) writeFileAtomic(path string, data []byte) (err error) {
	tmp, err := os.CreateTemp(f.dir, ".tmp-*")
	if err != nil {
		return err
	}
	defer func() {
		if err != nil {
			tmp.Close()
			os.Remove(tmp.Name())
		}
	}()
	if _, err = tmp.Write(data); err != nil {
		return err
	}
	if err = f.group.Sync(tmp); err != nil {
		return err
	}
	if err = tmp.Close(); err != nil {
		return err
	}
	if err = os.Rename(tmp.Name(), path); err != nil {
		return err
	}
	return f.group.Sync(nil)
}

// maxEscapedID bounds an escaped id so the file name stays well under the
// 255-byte limit of common file systems.
const maxEscapedID = 200

// EscapeSessionID turns any session id into a safe, distinct file name
// part: lower-case ASCII letters, digits, '-' and '_' stay as they are;
// every other byte (upper case included, so ids differing only in case do
// not collide on case-insensitive file systems; '.' included, so no name
// starts with a dot) becomes %XX. An escaped id longer than 200 bytes is
// cut to 100 and suffixed with "~" and the SHA-256 of the id ('~' never
// appears in an escaped id, so the two forms cannot collide).
func EscapeSessionID(id string) string {
	var b strings.Builder
	for i := 0; i < len(id); i++ {
		c := id[i]
		if c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-' || c == '_' {
			b.WriteByte(c)
			continue
		}
		fmt.Fprintf(&b, "%%%02X", c)
	}
	out := b.String()
	if len(out) > maxEscapedID {
		sum := sha256.Sum256([]byte(id))
		out = out[:100] + "~" + hex.EncodeToString(sum[:])
	}
	return out
}

// Exclusive reports true: a directory belongs to one host at a time.
func (s *Store) Exclusive() bool { return true }

// ErrNotShared is returned (wrapped) by Claim asked to share the store.
var ErrNotShared = errors.New("a directory of files belongs to one process and cannot be shared")

// Claim accepts this process alone on the store; a directory of files
// cannot be shared (ErrNotShared): share a SQLite file or a PostgreSQL
// database.
func (s *Store) Claim(shared bool) error {
	if shared {
		return fmt.Errorf("file store %s: %w; share a SQLite file or a PostgreSQL database", s.dir, ErrNotShared)
	}
	return nil
}
