package filestore

import (
	"context"
	"fmt"
	"os"
	"sort"
	"strconv"
	"strings"

	"github.com/ctxhost/ctxhost/record"
)

var _ interface {
	record.SessionLister
	Close() error
} = (*Store)(nil)

// List returns the ids of the sessions stored in the directory, sorted.
// A session whose escaped id is longer than 200 bytes is kept under a
// shortened, hashed file name that does not hold the id: List cannot name
// it and leaves it out (Load still finds it by its id).
func (f *Store) List(_ context.Context) ([]string, error) {
	entries, err := os.ReadDir(f.dir)
	if err != nil {
		return nil, fmt.Errorf("list sessions in %s: %w", f.dir, err)
	}
	seen := map[string]bool{}
	var ids []string
	for _, e := range entries {
		name := e.Name()
		if e.IsDir() || strings.HasPrefix(name, ".") {
			continue
		}
		base, ok := strings.CutSuffix(name, snapshotExt)
		if !ok {
			if base, ok = strings.CutSuffix(name, legacyExt); !ok {
				continue
			}
		}
		id, ok := unescapeSessionID(base)
		if !ok || seen[id] {
			continue
		}
		seen[id] = true
		ids = append(ids, id)
	}
	sort.Strings(ids)
	return ids, nil
}

// Close syncs what is not yet synced (the logs' witnesses) and releases
// the directory's handle. Use no Store after Close.
func (f *Store) Close() error {
	if err := f.group.Close(); err != nil {
		return fmt.Errorf("close file store %s: %w", f.dir, err)
	}
	return nil
}

// unescapeSessionID reverses EscapeSessionID; ok is false for a name that
// is not an escaped id or that was shortened (holds '~').
func unescapeSessionID(name string) (string, bool) {
	if name == "" {
		return "", false
	}
	var b strings.Builder
	for i := 0; i < len(name); i++ {
		c := name[i]
		switch {
		case c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-' || c == '_':
			b.WriteByte(c)
		case c == '%' && i+2 < len(name):
			v, err := strconv.ParseUint(name[i+1:i+3], 16, 8)
			if err != nil || strings.ToUpper(name[i+1:i+3]) != name[i+1:i+3] {
				return "", false
			}
			b.WriteByte(byte(v))
			i += 2
		default:
			return "", false
		}
	}
	id := b.String()
	if EscapeSessionID(id) != name {
		return "", false
	}
	return id, true
}
