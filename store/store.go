// Package store opens the session store a host's configuration names.
//
// A store spec is one string, read in this order:
//
//   - postgres://… or postgresql://… — a PostgreSQL database (package
//     postgres); ?search_path=NAME keeps the tables in schema NAME.
//   - sqlite:PATH — a SQLite database file at PATH (package sqlite).
//   - file:DIR — a directory of files (package filestore).
//   - a path ending in a path separator ("state/"), or naming an existing
//     directory — a directory of files. Earlier versions only knew this
//     kind, so a store directory in use keeps working as it is.
//   - a path ending in .db, .sqlite or .sqlite3, or naming an existing
//     file — a SQLite database file.
//   - any other path that does not exist yet — a SQLite database file.
//
// A directory or database file is created (with its parent directories)
// when it does not exist. Relative paths are relative to the working
// directory.
//
// What each backend offers: the SQLite file and PostgreSQL may be shared by
// several hosts at once (on one machine for SQLite, anywhere for
// PostgreSQL): a write made from a stale version is refused with
// record.ErrVersionConflict and no update is lost. A directory of files
// belongs to one host at a time. All three make every acknowledged write
// durable before it returns.
package store

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/ctxhost/ctxhost/record"
	"github.com/ctxhost/ctxhost/store/filestore"
	"github.com/ctxhost/ctxhost/store/postgres"
	"github.com/ctxhost/ctxhost/store/sqlite"
)

// Store is what Open returns: a record.Store that lists its sessions and
// must be closed.
type Store interface {
	record.Store
	record.SessionLister
	io.Closer
	// Claim declares how this process uses the store until Close: alone
	// (shared false), or shared with other processes that each check a
	// session's version before every call. A SQLite file is locked one
	// way or the other; a directory of files belongs to one process and
	// cannot be shared; PostgreSQL is always shared. A store that cannot
	// be used as asked returns an error for which ClaimRefused is true.
	Claim(shared bool) error
}

// ClaimRefused reports whether err is Claim's refusal to use the store as
// asked (not a failure to reach it): a SQLite file another process uses
// the other way, or a directory of files asked to be shared.
func ClaimRefused(err error) bool {
	return errors.Is(err, sqlite.ErrLocked) || errors.Is(err, filestore.ErrNotShared)
}

// Kind is a storage backend.
type Kind string

// The backends a spec may name.
const (
	Files    Kind = "files"    // a directory of files (package filestore)
	SQLite   Kind = "sqlite"   // a SQLite database file (package sqlite)
	Postgres Kind = "postgres" // a PostgreSQL database (package postgres)
)

// Spec is a parsed store spec: the backend, and where its data is (a
// directory, a file path, or a connection URL).
type Spec struct {
	Kind     Kind
	Location string
}

// String returns the spec in the form ParseSpec reads back to the same
// backend, with a URL's password hidden.
func (s Spec) String() string {
	switch s.Kind {
	case Postgres:
		return redact(s.Location)
	case SQLite:
		return "sqlite:" + s.Location
	default:
		return "file:" + s.Location
	}
}

// redact hides the password of a URL.
func redact(u string) string {
	scheme, rest, ok := strings.Cut(u, "://")
	if !ok {
		return u
	}
	userinfo, hostpath, ok := strings.Cut(rest, "@")
	if !ok || strings.Contains(userinfo, "/") {
		return u
	}
	if user, _, hasPass := strings.Cut(userinfo, ":"); hasPass {
		return scheme + "://" + user + ":xxxxx@" + hostpath
	}
	return u
}

// ParseSpec reads a store spec (see the package documentation). It looks
// at the file system only to tell whether a plain path exists and is a
// directory.
func ParseSpec(spec string) (Spec, error) {
	lower := strings.ToLower(spec)
	switch {
	case strings.TrimSpace(spec) == "":
		return Spec{}, errors.New("empty store spec")
	case strings.HasPrefix(lower, "postgres://"), strings.HasPrefix(lower, "postgresql://"):
		return Spec{Postgres, spec}, nil
	case strings.HasPrefix(lower, "sqlite:"):
		return pathSpec(SQLite, spec[len("sqlite:"):], spec)
	case strings.HasPrefix(lower, "file:"):
		return pathSpec(Files, spec[len("file:"):], spec)
	case strings.HasSuffix(spec, "/") || strings.HasSuffix(spec, string(filepath.Separator)):
		return Spec{Files, spec}, nil
	}
	info, err := os.Stat(spec)
	switch {
	case err == nil && info.IsDir():
		return Spec{Files, spec}, nil
	case err == nil:
		return Spec{SQLite, spec}, nil
	case !errors.Is(err, fs.ErrNotExist):
		return Spec{}, fmt.Errorf("store %q: %w", spec, err)
	}
	return Spec{SQLite, spec}, nil // a new path, with a SQLite extension or none
}

func pathSpec(kind Kind, path, spec string) (Spec, error) {
	if path == "" {
		return Spec{}, fmt.Errorf("store %q: no path after the colon", spec)
	}
	return Spec{kind, path}, nil
}

// Open opens the store spec names (see the package documentation),
// creating a directory, file or tables it needs. Close it when done.
func Open(ctx context.Context, spec string) (Store, error) {
	s, err := ParseSpec(spec)
	if err != nil {
		return nil, err
	}
	return s.Open(ctx)
}

// Open opens the store s describes. Close it when done.
func (s Spec) Open(ctx context.Context) (Store, error) {
	var (
		st  Store
		err error
	)
	switch s.Kind {
	case Files:
		st, err = filestore.New(s.Location)
	case SQLite:
		st, err = sqlite.New(s.Location)
	case Postgres:
		st, err = postgres.New(ctx, s.Location)
	default:
		return nil, fmt.Errorf("store %s: unknown kind %q", s, s.Kind)
	}
	if err != nil {
		return nil, fmt.Errorf("open store %s: %w", s, err)
	}
	return st, nil
}
