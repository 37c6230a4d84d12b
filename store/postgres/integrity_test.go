package postgres_test

import (
	"testing"

	"github.com/ctxhost/ctxhost/record"
	"github.com/ctxhost/ctxhost/store/postgres"
	"github.com/ctxhost/ctxhost/store/storetest"
)

// damage damages what the database holds for sid behind the store's back.
func damage(t *testing.T, st record.Store, sid string, d storetest.Damage) {
	stmt := map[storetest.Damage]string{
		storetest.DamageSnapshotByte:     `UPDATE {sessions} SET snapshot = convert_to('stXte', 'UTF8') WHERE id = $1`,
		storetest.DamageEventByte:        `UPDATE {events} SET data = convert_to('acknowledgeX', 'UTF8') WHERE session = $1 AND version = 2`,
		storetest.DamageLogDeleted:       `DELETE FROM {events} WHERE session = $1`,
		storetest.DamageLastEventDeleted: `DELETE FROM {events} WHERE session = $1 AND version = 3`,
	}[d]
	if err := postgres.Exec(t.Context(), st.(*postgres.Store), stmt, []byte(sid)); err != nil {
		t.Fatal(err)
	}
}
