package storetest

import (
	"bytes"
	"errors"
	"fmt"
	"testing"

	"github.com/ctxhost/ctxhost/record"
)

// Damage is one way a backend's stored data is damaged behind the
// store's back (a disk error, an operator's mistake).
type Damage int

// The kinds of damage the suite makes a backend suffer (through
// Options.Damager).
const (
	// DamageSnapshotByte changes one byte of the session's snapshot state
	// ("state" becomes "stXte").
	DamageSnapshotByte Damage = iota + 1
	// DamageEventByte changes one byte of the first event after the
	// snapshot ("acknowledged" becomes "acknowledgeX").
	DamageEventByte
	// DamageLogDeleted removes every event of the session (a deleted log
	// file, deleted rows).
	DamageLogDeleted
	// DamageLastEventDeleted removes the session's last event.
	DamageLastEventDeleted
)

func (d Damage) String() string {
	return [...]string{"", "SnapshotByte", "EventByte", "LogDeleted", "LastEventDeleted"}[d]
}

// Damager damages what st holds for session sid as d says; the session
// holds the snapshot "state" (version 1) and the events "acknowledged"
// (2) and "e3" (3).
type Damager func(t *testing.T, st record.Store, sid string, d Damage)

// damage: a damaged record, or a log gone missing, fails Load with
// record.ErrDamaged, and none of the session's bytes are returned.
func (s suite) damage(t *testing.T) {
	if s.opts.Damager == nil {
		t.Skip("the backend's test gives no Options.Damager")
	}
	for _, d := range []Damage{DamageSnapshotByte, DamageEventByte, DamageLogDeleted, DamageLastEventDeleted} {
		t.Run(d.String(), func(t *testing.T) {
			if reason, ok := s.opts.Skip["Damage/"+d.String()]; ok {
				t.Skip(reason)
			}
			st := s.open(t)
			sid := id(t, "d")
			mustDo(t, st.Snapshot(ctx(t), sid, 0, []byte("state")))
			mustDo(t, st.Append(ctx(t), sid, 1, []byte("acknowledged")))
			mustDo(t, st.Append(ctx(t), sid, 2, []byte("e3")))
			s.opts.Damager(t, st, sid, d)
			got, err := s.open(t).Load(ctx(t), sid)
			if !errors.Is(err, record.ErrDamaged) {
				t.Fatalf("Load after %v = %s, %v; want an error wrapping record.ErrDamaged", d, describe(got), err)
			}
			if len(got.Snapshot) != 0 || len(got.Events) != 0 || bytes.Contains([]byte(err.Error()), []byte("acknowledgeX")) {
				t.Fatalf("Load after %v returned damaged bytes: %s, %v", d, describe(got), err)
			}
		})
	}
}

func describe(st record.StoredSession) string {
	return fmt.Sprintf("{snapshot %s at %d, %d events}", short(st.Snapshot), st.SnapshotVersion, len(st.Events))
}
