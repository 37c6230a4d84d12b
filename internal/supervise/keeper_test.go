package supervise

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"
	"testing"
	"time"
)

// instance is a launched process of the fake: dead once killed.
type instance struct {
	n       int
	dead    atomic.Bool
	aborted atomic.Bool
}

func (i *instance) Abort() { i.aborted.Store(true) }

func (i *instance) call() (int, error) {
	if i.dead.Load() {
		return 0, fmt.Errorf("instance %d: %w", i.n, ErrDead)
	}
	return i.n, nil
}

// launcher launches numbered instances; fail makes the next launches fail.
type launcher struct {
	launched []*instance
	fail     int
}

func (l *launcher) launch(context.Context) (*instance, error) {
	if l.fail > 0 {
		l.fail--
		return nil, errors.New("launch refused")
	}
	i := &instance{n: len(l.launched) + 1}
	l.launched = append(l.launched, i)
	return i, nil
}

var fast = Options{Backoff: Backoff{Initial: time.Millisecond, Attempts: 3}}

// TestRetryDeadRelaunchesOnce: a call that finds its instance dead is made
// once more on a relaunched one (the dead one aborted, prepared before use,
// the generation and the restarts counted); a call that finds the new one
// dead too fails with ErrDead, not made a third time, and leaves a fresh
// instance for the next call.
func TestRetryDeadRelaunchesOnce(t *testing.T) {
	l := &launcher{}
	k, err := New(context.Background(), "p", l.launch, fast)
	if err != nil {
		t.Fatal(err)
	}
	prepared := 0
	k.SetPrepare(func(context.Context, *instance) error { prepared++; return nil })
	l.launched[0].dead.Store(true)
	n, err := RetryDead(context.Background(), k, (*instance).call)
	if err != nil || n != 2 {
		t.Fatalf("after a death: instance %d, %v; want 2", n, err)
	}
	if !l.launched[0].aborted.Load() || prepared != 1 || k.Generation() != 1 || k.Restarts() != 1 {
		t.Errorf("aborted %v, prepared %d, generation %d, restarts %d; want true, 1, 1, 1",
			l.launched[0].aborted.Load(), prepared, k.Generation(), k.Restarts())
	}
	restarted := 0
	k.opts.OnRestart = func(string, error) { restarted++ }
	l.launched[1].dead.Store(true)
	calls := 0
	dieOnUse := func(i *instance) (int, error) { calls++; i.dead.Store(true); return i.call() }
	if _, err := RetryDead(context.Background(), k, dieOnUse); !errors.Is(err, ErrDead) {
		t.Fatalf("dead twice: %v, want ErrDead", err)
	}
	if calls != 2 || restarted != 2 || len(l.launched) != 4 {
		t.Errorf("%d calls made, restarted %d times, %d launched; want 2 (on instances 2 and 3), 2 and 4", calls, restarted, len(l.launched))
	}
	if n, err := RetryDead(context.Background(), k, (*instance).call); err != nil || n != 4 {
		t.Errorf("the next call: instance %d, %v; want 4", n, err)
	}
}

// TestRelaunchGivesUp: a relaunch whose launches keep failing gives up
// after the backoff's attempts with ErrDead, and a later call tries again.
func TestRelaunchGivesUp(t *testing.T) {
	l := &launcher{}
	k, err := New(context.Background(), "p", l.launch, fast)
	if err != nil {
		t.Fatal(err)
	}
	l.launched[0].dead.Store(true)
	l.fail = 3
	if _, err := RetryDead(context.Background(), k, (*instance).call); !errors.Is(err, ErrDead) || l.fail != 0 {
		t.Fatalf("launches failing: %v with %d failures left; want ErrDead after 3 attempts", err, l.fail)
	}
	if n, err := RetryDead(context.Background(), k, (*instance).call); err != nil || n != 2 {
		t.Fatalf("once launches work again: instance %d, %v; want 2", n, err)
	}
}

// TestIfCurrent: fn runs only while the generation it names is current.
func TestIfCurrent(t *testing.T) {
	l := &launcher{}
	k, _ := New(context.Background(), "p", l.launch, fast)
	ran := 0
	if !k.IfCurrent(0, func() { ran++ }) || ran != 1 {
		t.Fatal("generation 0 is current")
	}
	if err := k.Relaunch(context.Background(), 0, errors.New("test")); err != nil {
		t.Fatal(err)
	}
	if k.IfCurrent(0, func() { ran++ }) || ran != 1 {
		t.Error("fn ran for a replaced generation")
	}
	if err := k.Relaunch(context.Background(), 0, errors.New("again")); err != nil || k.Generation() != 1 {
		t.Errorf("relaunching a replaced generation: %v, generation %d; want nothing done", err, k.Generation())
	}
}

// TestBackoff: Do stops at the attempts, at a refusal and at success, and
// waits as Wait says; OrDefault fills zero fields only.
func TestBackoff(t *testing.T) {
	b := Backoff{Initial: time.Microsecond, Factor: 3, Max: 5 * time.Microsecond, Attempts: 4}
	var waits []time.Duration
	n, err := b.Do(context.Background(), func(int) error { return errors.New("no") }, nil,
		func(_ int, _ error, w time.Duration) { waits = append(waits, w) })
	if n != 4 || err == nil || fmt.Sprint(waits) != "[1µs 3µs 5µs]" {
		t.Errorf("always failing: %d attempts, %v, waits %v; want 4, an error, [1µs 3µs 5µs]", n, err, waits)
	}
	for i, w := range waits {
		if b.Wait(i+1) != w {
			t.Errorf("Wait(%d) = %v, Do waited %v", i+1, b.Wait(i+1), w)
		}
	}
	if n, _ := b.Do(context.Background(), func(int) error { return errors.New("final") }, func(error) bool { return false }, nil); n != 1 {
		t.Errorf("a refused error: %d attempts, want 1", n)
	}
	if n, err := b.Do(context.Background(), func(a int) error {
		if a < 2 {
			return errors.New("once")
		}
		return nil
	}, nil, nil); n != 2 || err != nil {
		t.Errorf("second attempt succeeds: %d, %v", n, err)
	}
	if got := (Backoff{Attempts: 2}).OrDefault(RelaunchBackoff); got.Attempts != 2 || got.Initial != RelaunchBackoff.Initial || got.Max != RelaunchBackoff.Max {
		t.Errorf("OrDefault: %+v", got)
	}
}
