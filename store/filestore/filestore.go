// Package filestore is a host.Store that keeps each session in two files
// of one directory: a snapshot, replaced atomically, and an append-only
// log of the events since, each append fsynced before it returns.
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

	"github.com/ctxhost/ctxhost/host"
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

// snapshotHeader2 starts every snapshot file written now: the format, the
// version and the CRC-32C of the state ("ctxhost-snapshot 2 version N
// crc32c XXXXXXXX"). A snapshot of this format promises a log file
// beside it (empty until the first append).
const snapshotHeader2 = "ctxhost-snapshot 2 version "

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// Store keeps sessions in a directory. A snapshot is written atomically
// (temporary file, fsync, rename, directory fsync); an event is appended
// to the log as one record (a header with its version, length and
// CRC-32C, then the bytes) and fsynced before Append returns, so an
// acknowledged save survives kill -9 and power loss. A record cut short by
// a crash during its append (never acknowledged) is dropped when the log is
// next read. A snapshot carries the CRC-32C of its state. A record or
// snapshot failing its checksum, or a log missing beside its snapshot,
// fails Load with host.ErrDamaged, and nothing of the session is
// returned.
//
// A directory belongs to one host at a time: the Store checks expected
// versions against what it read or wrote itself.
type Store struct {
	dir string

	mu       sync.Mutex
	sessions map[string]*session
}

// session is what the Store knows of one stored session.
type session struct {
	mu      sync.Mutex
	loaded  bool
	version uint64 // 0: nothing stored, or a legacy file only
	logSize int64  // bytes of valid records in the log
	torn    bool   // the log holds more than its valid records
}

var _ host.Store = (*Store)(nil)

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
	return &Store{dir: dir, sessions: map[string]*session{}}, nil
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
// stored wraps host.ErrNotStored.
func (f *Store) Load(_ context.Context, id string) (host.StoredSession, error) {
	s := f.session(id)
	s.mu.Lock()
	defer s.mu.Unlock()
	st, logSize, err := f.read(id)
	if err != nil {
		return host.StoredSession{}, fmt.Errorf("load session %q: %w", id, err)
	}
	s.loaded, s.version, s.logSize, s.torn = true, st.Version(), logSize, true
	return st, nil
}

// read reads the session's files; logSize is the length of the log's valid
// records.
func (f *Store) read(id string) (st host.StoredSession, logSize int64, err error) {
	snapPath, logPath, legacyPath := f.Files(id)
	snap, err := os.ReadFile(snapPath)
	needLog := false
	switch {
	case err == nil:
		if st.SnapshotVersion, st.Snapshot, needLog, err = parseSnapshot(snap); err != nil {
			return host.StoredSession{}, 0, fmt.Errorf("%s: %w: %w", snapPath, host.ErrDamaged, err)
		}
	case errors.Is(err, fs.ErrNotExist):
		legacy, lerr := os.ReadFile(legacyPath)
		if lerr != nil && !errors.Is(lerr, fs.ErrNotExist) {
			return st, 0, lerr
		}
		st.Snapshot = legacy // version 0
	default:
		return st, 0, err
	}
	logData, err := os.ReadFile(logPath)
	if errors.Is(err, fs.ErrNotExist) && needLog {
		return host.StoredSession{}, 0, fmt.Errorf("%s: %w: the log is missing", logPath, host.ErrDamaged)
	}
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return st, 0, err
	}
	if st.Snapshot == nil {
		if len(logData) > 0 {
			return st, 0, fmt.Errorf("%s: a log without a snapshot", logPath)
		}
		return st, 0, host.ErrNotStored
	}
	events, size, err := parseLog(logData, st.SnapshotVersion)
	if err != nil {
		return host.StoredSession{}, 0, fmt.Errorf("%s: %w: %w", logPath, host.ErrDamaged, err)
	}
	st.Events = events
	return st, size, nil
}

// loaded makes sure s knows the stored version; the caller holds s.mu.
func (f *Store) ensureLoaded(id string, s *session) error {
	if s.loaded {
		return nil
	}
	st, logSize, err := f.read(id)
	if errors.Is(err, host.ErrNotStored) {
		s.loaded, s.version, s.logSize = true, 0, 0
		return nil
	}
	if err != nil {
		return err
	}
	s.loaded, s.version, s.logSize, s.torn = true, st.Version(), logSize, true
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
		return fmt.Errorf("append to session %q: stored version %d, expected %d: %w", id, s.version, expected, host.ErrVersionConflict)
	}
	_, logPath, _ := f.Files(id)
	size, err := appendRecord(logPath, s.logSize, s.torn, expected+1, event)
	if err != nil {
		s.loaded = false // read the log again before the next append
		return fmt.Errorf("append to session %q: %w", id, err)
	}
	s.version, s.logSize, s.torn = expected+1, size, false
	return nil
}

// appendRecord writes one record at offset at (with cut: dropping
// anything after it, such as a record a crash cut short) and syncs the
// file; it returns the new size.
func appendRecord(path string, at int64, cut bool, version uint64, event []byte) (int64, error) {
	file, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE, 0o600)
	if err != nil {
		return 0, err
	}
	created := at == 0
	rec := fmt.Appendf(nil, "%d %d %08x\n", version, len(event), crc32.Checksum(event, castagnoli))
	rec = append(append(rec, event...), '\n')
	if cut { // first, so that a write cut short leaves a short record, never old bytes after it
		err = file.Truncate(at)
	}
	if err == nil {
		_, err = file.WriteAt(rec, at)
	}
	if err == nil {
		err = file.Sync()
	}
	if cerr := file.Close(); err == nil {
		err = cerr
	}
	if err == nil && created {
		err = syncDir(filepath.Dir(path))
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
		return fmt.Errorf("snapshot session %q: stored version %d, expected %d: %w", id, s.version, expected, host.ErrVersionConflict)
	}
	snapPath, logPath, legacyPath := f.Files(id)
	if err := ensureFile(logPath); err != nil {
		return fmt.Errorf("snapshot session %q: create the log: %w", id, err)
	}
	data := fmt.Appendf(nil, "%s%d crc32c %08x\n", snapshotHeader2, expected+1, crc32.Checksum(state, castagnoli))
	data = append(data, state...)
	if err := writeFileAtomic(f.dir, snapPath, data); err != nil {
		return fmt.Errorf("snapshot session %q: %w", id, err)
	}
	s.version = expected + 1
	if err := os.Truncate(logPath, 0); err != nil && !errors.Is(err, fs.ErrNotExist) {
		s.loaded = false
		return fmt.Errorf("snapshot session %q: empty the log: %w", id, err)
	}
	s.logSize, s.torn = 0, false
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
	s.loaded, s.version, s.logSize = true, 0, 0
	if err := syncDir(f.dir); err != nil {
		return fmt.Errorf("delete session %q: %w", id, err)
	}
	return nil
}

// parseSnapshot reads a snapshot file: its version and state, checked
// against its checksum, and whether a log must be beside it.
func parseSnapshot(data []byte) (version uint64, state []byte, needLog bool, err error) {
	line, rest, ok := bytes.Cut(data, []byte("\n"))
	switch {
	case ok && bytes.HasPrefix(line, []byte(snapshotHeader2)):
		var sum uint32
		if _, err := fmt.Sscanf(string(line[len(snapshotHeader2):]), "%d crc32c %08x", &version, &sum); err != nil || version == 0 {
			return 0, nil, false, fmt.Errorf("bad snapshot header %q", line)
		}
		if crc32.Checksum(rest, castagnoli) != sum {
			return 0, nil, false, fmt.Errorf("the snapshot of version %d fails its checksum", version)
		}
		return version, rest, true, nil
	case ok && bytes.HasPrefix(line, []byte(snapshotHeader)):
		v, err := strconv.ParseUint(string(line[len(snapshotHeader):]), 10, 64)
		if err != nil || v == 0 {
			return 0, nil, false, fmt.Errorf("snapshot version %q", line[len(snapshotHeader):])
		}
		return v, rest, false, nil
	}
	return 0, nil, false, fmt.Errorf("not a snapshot (want a first line %q)", snapshotHeader2+"N crc32c X")
}

// ensureFile creates path, empty, when it does not exist, durably.
func ensureFile(path string) error {
	file, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if errors.Is(err, fs.ErrExist) {
		return nil
	}
	if err != nil {
		return err
	}
	if err := file.Close(); err != nil {
		return err
	}
	return syncDir(filepath.Dir(path))
}

// parseLog returns the events after version from, checking every record;
// size is the length of the valid records. A last record that is
// incomplete was cut short by a crash while it was appended (it was never
// acknowledged) and is left out; a complete one failing its checksum is
// damage.
func parseLog(data []byte, from uint64) (events [][]byte, size int64, err error) {
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

// writeFileAtomic writes data to path through a temporary file in dir;
// on any failure the temporary file is removed and path is untouched.
func writeFileAtomic(dir, path string, data []byte) (err error) {
	tmp, err := os.CreateTemp(dir, ".tmp-*")
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
	if err = tmp.Sync(); err != nil {
		return err
	}
	if err = tmp.Close(); err != nil {
		return err
	}
	if err = os.Rename(tmp.Name(), path); err != nil {
		return err
	}
	return syncDir(dir)
}

// syncDir makes a rename or a new file in dir durable.
func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	if err := d.Sync(); err != nil && !errors.Is(err, os.ErrInvalid) {
		return err
	}
	return nil
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
