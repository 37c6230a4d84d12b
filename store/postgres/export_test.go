package postgres

import (
	"context"
	"strings"
)

// FirstSchema is firstSchema, for tests.
var FirstSchema = firstSchema

// SetSchemaVersion records v as the database's schema version.
func SetSchemaVersion(ctx context.Context, s *Store, v int) error {
	_, err := s.pool.Exec(ctx, `UPDATE `+s.versionTable+` SET version = $1`, v)
	return err
}

// Exec runs a statement on the store's database (to damage it in tests);
// {sessions} and {events} name the store's tables.
func Exec(ctx context.Context, s *Store, stmt string, args ...any) error {
	stmt = strings.NewReplacer("{sessions}", s.sessions, "{events}", s.events).Replace(stmt)
	_, err := s.pool.Exec(ctx, stmt, args...)
	return err
}
