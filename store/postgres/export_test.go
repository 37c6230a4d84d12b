package postgres

import "context"

// FirstSchema is firstSchema, for tests.
var FirstSchema = firstSchema

// SetSchemaVersion records v as the database's schema version.
func SetSchemaVersion(ctx context.Context, s *Store, v int) error {
	_, err := s.pool.Exec(ctx, `UPDATE `+s.versionTable+` SET version = $1`, v)
	return err
}
