// Package assemblytest is shared test support for assemblers: the standard
// request cases every format is golden-tested on, golden-file comparison
// with an -update flag, the reference trajectories as requests, a large
// request and the benchmarks built on it, and checks that no section is
// emitted empty.
package assemblytest
