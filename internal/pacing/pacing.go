// Package pacing offers a steady load for benchmarks: many sessions, each
// taking its turns at its own phase of one period, so that the turns come
// at an even rate whatever the answers' latency, and each turn's latency
// counts from when it was due (a late answer delays no later turn's
// clock, as it would in a closed loop).
package pacing

import (
	"sync"
	"time"
)

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
