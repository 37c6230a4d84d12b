package host

import (
	"context"

	"github.com/ctxhost/ctxhost/record"
)

// Journals are the Recorders over st that the tests use: a record.Journal
// per session, writing a snapshot when the log would outgrow floor bytes
// (0: record.DefaultSnapshotFloor).
func Journals(st record.Store, floor int) Recorders { return journals{st, floor} }

type journals struct {
	st    record.Store
	floor int
}

func (j journals) Create(ctx context.Context, id string) (Recorder, error) {
	r, err := record.Create(ctx, j.st, id, j.floor)
	if err != nil {
		return nil, err
	}
	return r, nil
}

func (j journals) Open(ctx context.Context, id string) (Recorder, bool, error) {
	r, found, err := record.Open(ctx, j.st, id, j.floor)
	if err != nil {
		return nil, false, err
	}
	return r, found, nil
}

// Wait waits for the session's summary request in flight, if any, to end
// (its answer or failure is then left for the next turn).
func (m *Summaries) Wait() {
	m.mu.Lock()
	done := m.inflight
	m.mu.Unlock()
	if done != nil {
		<-done
	}
}
