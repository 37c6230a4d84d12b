package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	"github.com/ctxhost/ctxhost/record"
)

var _ record.VersionReader = (*Store)(nil)

// Version returns the session's current version (0 when it is not
// stored) with one indexed read, without loading the session: hosts
// sharing the file call it before every call to notice another host's
// write.
func (s *Store) Version(ctx context.Context, id string) (uint64, error) {
	var v uint64
	st, err := s.prepared(ctx, `SELECT version FROM sessions WHERE id = ?`)
	if err == nil {
		err = st.QueryRowContext(ctx, []byte(id)).Scan(&v)
	}
	if errors.Is(err, sql.ErrNoRows) {
		return 0, nil
	}
	if err != nil {
		return 0, fmt.Errorf("sqlite store: version of %q: %w", id, err)
	}
	return v, nil
}
