package postgres_test

import (
	"errors"
	"testing"

	"github.com/ctxhost/ctxhost/host"
	"github.com/ctxhost/ctxhost/internal/pgtest"
	"github.com/ctxhost/ctxhost/store/postgres"
)

func TestDamageIsDetected(t *testing.T) {
	url := pgtest.URL(t)
	for _, tc := range []struct{ name, damage string }{
		{"snapshot byte", `UPDATE {sessions} SET snapshot = convert_to('stXte', 'UTF8')`},
		{"event byte", `UPDATE {events} SET data = convert_to('acknowledgeX', 'UTF8') WHERE version = 2`},
		{"log deleted", `DELETE FROM {events}`},
		{"last event deleted", `DELETE FROM {events} WHERE version = 3`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx := t.Context()
			s := opener(url)(t).(*postgres.Store)
			id := t.Name()
			must := func(err error) {
				t.Helper()
				if err != nil {
					t.Fatal(err)
				}
			}
			must(s.Delete(ctx, id))
			must(postgres.Exec(ctx, s, `DELETE FROM {sessions}`))
			must(s.Snapshot(ctx, id, 0, []byte("state")))
			must(s.Append(ctx, id, 1, []byte("acknowledged")))
			must(s.Append(ctx, id, 2, []byte("e3")))
			must(postgres.Exec(ctx, s, tc.damage))
			st, err := s.Load(ctx, id)
			if !errors.Is(err, host.ErrDamaged) || len(st.Snapshot) != 0 || len(st.Events) != 0 {
				t.Fatalf("Load = %+v, %v; want host.ErrDamaged and nothing returned", st, err)
			}
		})
	}
}
