package pacing

import (
	"errors"
	"sync/atomic"
	"testing"
	"time"
)

// TestRunPacesEverySession: every session takes every round, turns come
// no sooner than due, and the first error is returned with the failing
// session stopped.
func TestRunPacesEverySession(t *testing.T) {
	var turns atomic.Int64
	start := time.Now()
	lat, elapsed, err := Run(10, 3, 20*time.Millisecond, func(k, r int) error { turns.Add(1); return nil })
	if err != nil || turns.Load() != 30 || len(lat) != 30 {
		t.Fatalf("%d turns, %d latencies, %v; want 30, 30, nil", turns.Load(), len(lat), err)
	}
	if elapsed < 2*20*time.Millisecond || time.Since(start) < elapsed {
		t.Errorf("3 rounds of a 20 ms period took %s: the turns were not paced", elapsed)
	}
	boom := errors.New("boom")
	turns.Store(0)
	_, _, err = Run(4, 5, time.Millisecond, func(k, r int) error {
		turns.Add(1)
		if k == 2 && r == 1 {
			return boom
		}
		return nil
	})
	if !errors.Is(err, boom) || turns.Load() != 4*5-3 {
		t.Errorf("err %v after %d turns; want boom after 17 (session 2 stops after its second)", err, turns.Load())
	}
}

// TestClosedPlaysEveryTurnOnce: every turn number is played once, over
// every session, and the first error is returned with the failing
// session stopped while the others go on.
func TestClosedPlaysEveryTurnOnce(t *testing.T) {
	played := make([]atomic.Int64, 200)
	var sessions [8]atomic.Int64
	lat, _, err := Closed(8, 200, func(k, i int) error {
		played[i].Add(1)
		sessions[k].Add(1)
		time.Sleep(time.Millisecond)
		return nil
	})
	if err != nil || len(lat) != 200 {
		t.Fatalf("%d latencies, %v", len(lat), err)
	}
	for i := range played {
		if n := played[i].Load(); n != 1 || lat[i] < time.Millisecond {
			t.Fatalf("turn %d played %d times, latency %v", i, n, lat[i])
		}
	}
	for k := range sessions {
		if sessions[k].Load() == 0 {
			t.Errorf("session %d played no turn", k)
		}
	}
	boom := errors.New("boom")
	var after atomic.Int64
	_, _, err = Closed(4, 100, func(k, i int) error {
		if i == 50 {
			return boom
		}
		after.Add(1)
		return nil
	})
	if !errors.Is(err, boom) || after.Load() != 99 {
		t.Fatalf("err %v, %d turns by the other sessions; want boom, 99", err, after.Load())
	}
}
