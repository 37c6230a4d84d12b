package sqlite

import "context"

// SetSchemaVersion records v as the file's schema version.
func SetSchemaVersion(s *Store, v int) error {
	_, err := s.db.ExecContext(context.Background(), `UPDATE schema_version SET version = ?`, v)
	return err
}
