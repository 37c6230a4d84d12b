// Package suite says how much of their material the slowest tests replay.
// Under `make test` each replays a representative slice: every class of
// case it checks (a form of a run, an endpoint, a window, a strategy)
// still runs, on one of the materials, and the materials rotate across the
// classes so that every one of them is replayed too. Under `make
// test-full` (EnvFull set) each replays the whole cross product, as
// before there were slices.
package suite

import (
	"os"
	"testing"
)

// EnvFull names the variable that makes the sliced tests replay all of
// their material: CTXHOST_TEST_FULL=1 (make test-full sets it).
const EnvFull = "CTXHOST_TEST_FULL"

// Full reports whether EnvFull is set (to anything but "" or "0").
func Full() bool {
	v := os.Getenv(EnvFull)
	return v != "" && v != "0"
}

// Pick reports whether the class numbered class (one combination of
// what a test varies) runs on material number m of n: under Full every
// material; otherwise material class mod n alone, so that consecutive
// classes take consecutive materials and each material is taken by some
// class once there are at least n classes.
func Pick(class, m, n int) bool {
	if Full() || n <= 1 {
		return true
	}
	return class%n == m%n
}

// Note logs that tb replays a slice of what (make test-full, or EnvFull,
// replays all of it); under Full it logs nothing.
func Note(tb testing.TB, what string) {
	tb.Helper()
	if !Full() {
		tb.Logf("a slice of %s: each class of case on one of them, rotated (%s=1, make test-full, replays all)", what, EnvFull)
	}
}
