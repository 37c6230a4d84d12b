package sqlite

import "context"

// SetSchemaVersion records v as the file's schema version.
func SetSchemaVersion(s *Store, v int) error {
	_, err := s.db.ExecContext(context.Background(), `UPDATE schema_version SET version = ?`, v)
	return err
}

// VersionUnprepared is Version with its statement parsed on every call,
// as Version read before its statement was prepared once.
func VersionUnprepared(s *Store, id string) (uint64, error) {
	var v uint64
	err := s.db.QueryRowContext(context.Background(), `SELECT version FROM sessions WHERE id = ?`, []byte(id)).Scan(&v)
	return v, err
}
