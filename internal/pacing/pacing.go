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
	var (
		next  atomic.Int64
		wg    sync.WaitGroup
		once  sync.Once
		start = time.Now()
	)
	for k := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				i := int(next.Add(1) - 1)
				if i >= turns {
					return
				}
				t0 := time.Now()
				if e := turn(k, i); e != nil {
					once.Do(func() { err = e })
					return
				}
				lat[i] = time.Since(t0)
			}
		}()
	}
	wg.Wait()
	return lat, time.Since(start), err
}

// Run plays rounds turns on each of n sessions: session k's turn r is due
// at period*(r + k/n) from the start. It returns every turn's latency
// from when it was due (turn r of session k at r*n+k), the time all took,
// and the first error a turn returned; a session stops at its error.
func Run(n, rounds int, period time.Duration, turn func(session, round int) error) (lat []time.Duration, elapsed time.Duration, err error) {
	lat = make([]time.Duration, rounds*n)
	var (
		wg    sync.WaitGroup
		once  sync.Once
		start = time.Now()
	)
	for k := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			due := start.Add(period * time.Duration(k) / time.Duration(n))
			for r := range rounds {
				time.Sleep(time.Until(due))
				if e := turn(k, r); e != nil {
					once.Do(func() { err = e })
					return
				}
				lat[r*n+k] = time.Since(due)
				due = due.Add(period)
			}
		}()
	}
	wg.Wait()
	return lat, time.Since(start), err
}
