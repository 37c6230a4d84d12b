package postgres

import (
	"context"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/ctxhost/ctxhost/record"
)

var _ record.VersionReader = (*Store)(nil)

// Version returns the session's current version (0 when it is not
// stored) with one indexed read, without loading the session: hosts
// sharing the database call it before every call to notice another
// host's write.
func (s *Store) Version(ctx context.Context, id string) (uint64, error) {
	var v int64
	err := s.pool.QueryRow(ctx, `SELECT version FROM `+s.sessions+` WHERE id = $1`, []byte(id)).Scan(&v)
	if errors.Is(err, pgx.ErrNoRows) {
		return 0, nil
	}
	if err != nil {
		return 0, fmt.Errorf("postgres store: version of %q: %w", id, err)
	}
	return uint64(v), nil
}
