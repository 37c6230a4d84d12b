package host

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/ctxhost/ctxhost/sdk"
)

// ErrNotStored is returned (wrapped) by Store.Load for a session id the
// store holds no state for.
var ErrNotStored = errors.New("session state not stored")

// ErrStored is returned (wrapped) by Host.NewSession when the host's store
// already holds state for the id: continue it with Host.OpenSession, or end
// it first.
var ErrStored = errors.New("session state already stored")

// ErrNotPersisted is wrapped by the error of a call that changed a session
// but could not save the session's state to the host's store: the change
// is applied in memory (and results returned beside the error are valid),
// but a host restart would lose it. The next successful call saves the
// whole state again.
var ErrNotPersisted = errors.New("change applied but not persisted")

// Store keeps each session's exported state (Session.ExportState) so a
// session survives a host restart. Implementations must be safe for
// concurrent use by different sessions; calls for one session are
// serialized by the session.
type Store interface {
	// Save replaces the session's stored state.
	Save(sessionID string, state []byte) error
	// Load returns the session's stored state, or an error wrapping
	// ErrNotStored when there is none.
	Load(sessionID string) ([]byte, error)
	// Delete forgets the session's state; deleting nothing is not an error.
	Delete(sessionID string) error
}

// FileStore is a Store that keeps one file per session, <dir>/<escaped
// id>.json, written atomically: a temporary file in the same directory is
// written, fsynced and renamed over the old one (then the directory is
// fsynced), so a reader or a crash sees the old state or the new one, never
// a mix.
type FileStore struct {
	dir string
}

var _ Store = (*FileStore)(nil)

// NewFileStore returns a store in dir, creating the directory (0700) when
// it does not exist. Temporary files a crashed host left behind (.tmp-*)
// are removed: a store directory belongs to one host at a time.
func NewFileStore(dir string) (*FileStore, error) {
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
	return &FileStore{dir: dir}, nil
}

// Dir returns the store's directory.
func (f *FileStore) Dir() string { return f.dir }

// Path returns the file that holds sessionID's state.
func (f *FileStore) Path(sessionID string) string {
	return filepath.Join(f.dir, EscapeSessionID(sessionID)+".json")
}

// Save writes the state atomically (temporary file, fsync, rename).
func (f *FileStore) Save(sessionID string, state []byte) error {
	if err := writeFileAtomic(f.dir, f.Path(sessionID), state); err != nil {
		return fmt.Errorf("save session %q: %w", sessionID, err)
	}
	return nil
}

// Load reads the session's state; a missing file wraps ErrNotStored.
func (f *FileStore) Load(sessionID string) ([]byte, error) {
	b, err := os.ReadFile(f.Path(sessionID))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("load session %q: %w", sessionID, ErrNotStored)
	}
	if err != nil {
		return nil, fmt.Errorf("load session %q: %w", sessionID, err)
	}
	return b, nil
}

// Delete removes the session's file; a missing file is not an error.
func (f *FileStore) Delete(sessionID string) error {
	err := os.Remove(f.Path(sessionID))
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("delete session %q: %w", sessionID, err)
	}
	return nil
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

// syncDir makes a rename in dir durable.
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

// StateKeeper is implemented by a ContextPlugin that keeps each session's
// last plugin state (a Supervisor). KeptState returns it only when it is
// exactly what State would return now (it was fetched with State after the
// last call that could change it); the host then saves it without an RPC.
type StateKeeper interface {
	KeptState(session string) ([]byte, bool)
}

// knownState is a plugin's state as fetched from plugin generation gen;
// it stays valid until the session makes a call that may change it.
type knownState struct {
	gen   int
	state []byte
}

// persist saves the session's state to the store (none: nothing to do).
// The caller holds s.mu. Plugin states the session knows unchanged since
// they were last fetched are not asked for again.
func (s *Session) persist() error {
	if s.store == nil || s.ended {
		return nil
	}
	data, err := s.exportLocked(context.Background(), s.knownPluginState)
	if err == nil {
		err = s.store.Save(s.id, data)
	}
	if err != nil {
		return fmt.Errorf("%w: %w", ErrNotPersisted, err)
	}
	return nil
}

// knownPluginState returns p's current state: the one known unchanged, or
// the plugin's kept one (StateKeeper), or a State call.
func (s *Session) knownPluginState(ctx context.Context, p *pluginSlot) ([]byte, error) {
	gen := generationOf(p.binding.Plugin)
	if k, ok := s.known[p.binding.Name]; ok && k.gen == gen {
		return k.state, nil
	}
	b, ok := []byte(nil), false
	if keeper, isKeeper := p.binding.Plugin.(StateKeeper); isKeeper {
		b, ok = keeper.KeptState(s.id)
	}
	if !ok {
		var err error
		if b, err = s.pluginState(ctx, p); err != nil {
			return nil, err
		}
	}
	if generationOf(p.binding.Plugin) == gen {
		s.known[p.binding.Name] = knownState{gen: gen, state: b}
	}
	return b, nil
}

// forgetState drops what the session knows of plugin's state: a call that
// may change it is about to run.
func (s *Session) forgetState(plugin string) { delete(s.known, plugin) }

// forgetCompacted drops the known state of every plugin the report asked
// to compact (cs are the components the report was made over).
func (s *Session) forgetCompacted(cs []countedComponent, report *CompactionReport) {
	if report == nil {
		return
	}
	asked := map[string]bool{}
	for _, st := range report.Steps {
		if st.Action == "compact" {
			asked[st.Component] = true
		}
	}
	for _, c := range cs {
		if c.plugin != nil && asked[c.comp.Name] {
			s.forgetState(c.plugin.binding.Name)
		}
	}
}

// forgetPrepared drops the known state of every plugin whose Prepared hook
// is called.
func (s *Session) forgetPrepared() {
	for _, p := range s.plugins {
		if p.info.HasCapability(sdk.CapPrepared) {
			s.forgetState(p.binding.Name)
		}
	}
}
