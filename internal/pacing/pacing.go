// Package pacing offers the loads of the many-session benchmarks: a steady
// one (Run), many sessions each taking its turns at its own phase of one
// period, so that the turns come at an even rate whatever the answers'
// latency, and each turn's latency counts from when it was due (a late
// answer delays no later turn's clock, as it would in a closed loop); and
// a closed loop (Closed), each session taking its next turn as soon as
// its last one returned.
package pacing

import (
	"sync"
	"sync/atomic"
	"time"
)

// Closed plays turns turns over n sessions, one goroutine each, every
// session taking the next turn (numbered from 0 across all sessions) as
// soon as its last one returned. It returns every turn's latency by its
// number, the time all took, and the first error a turn returned; a
// session stops at its error.
func Closed(n, turns int, turn func(session, i int) error) (lat []time.Duration, elapsed time.Duration, err error) {
	lat = make([]time.Duration, turns)
	var next atomic.Int64
	elapsed, err = sessions(n, func(k int, _ time.Time) error {
		for {
			i := int(next.Add(1) - 1)
			if i >= turns {
				return nil
			}
			t0 := time.Now()
			if err := turn(k, i); err != nil {
				return err
			}
			lat[i] = time.Since(t0)
		}
	})
	return lat, elapsed, err
}

// Run plays rounds turns on each of n sessions: session k's turn r is due
// at period*(r + k/n) from the start. It returns every turn's latency
// from when it was due (turn r of session k at r*n+k), the time all took,
// and the first error a turn returned; a session stops at its error.
func Run(n, rounds int, period time.Duration, turn func(session, round int) error) (lat []time.Duration, elapsed time.Duration, err error) {
	lat = make([]time.Duration, rounds*n)
	elapsed, err = sessions(n, func(k int, start time.Time) error {
		due := start.Add(period * time.Duration(k) / time.Duration(n))
		for r := range rounds {
			time.Sleep(time.Until(due))
			if err := turn(k, r); err != nil {
				return err
			}
			lat[r*n+k] = time.Since(due)
			due = due.Add(period)
		}
		return nil
	})
	return lat, elapsed, err
}

// sessions runs session(k, start) for k in [0, n), each on a goroutine of
// its own, all given the same start time, and returns the time all took
// and the first error one returned.
func sessions(n int, session func(k int, start time.Time) error) (time.Duration, error) {
	var (
		wg    sync.WaitGroup
		once  sync.Once
		first error
		start = time.Now()
	)
	for k := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := session(k, start); err != nil {
				once.Do(func() { first = err })
			}
		}()
	}
	wg.Wait()
	return time.Since(start), first
}
