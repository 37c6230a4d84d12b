// Package servicechaos holds the adversarial suite of `ctxhost serve`: the
// real binary killed with SIGKILL under concurrent load on SQLite and
// PostgreSQL, PostgreSQL connections cut under load, two servers creating
// one session, damaged stores, giant and partial requests, fuzzed
// requests, a disk that fills up and frees again under load, a plugin
// process stopped with SIGSTOP, and the memory patterns held to
// memory_limit plus a constant of peak RSS (60 connections holding 8 MB
// bodies, 40 concurrent 9 MB provider calls, a 20 MB streamed answer, of words and of markup), and the CPU
// patterns held as ratios of the server's CPU time (1 MB of one repeated letter cut to a 128k window against
// ordinary words; a 20 MB Anthropic answer in 4 KB deltas against a 5 MB one). Every run reports what it counted:
// messages lost, duplicated or partially applied, damaged bytes served,
// INTERNAL answers, and the server's peak RSS. Its tests carry the build
// tag chaos: run them with `make chaos-service` (they take minutes). It
// has no code of its own.
package servicechaos
