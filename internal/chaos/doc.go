// Package chaos holds the crash-consistency test of the host: a long
// replay through the real plugin processes while they are killed with
// SIGKILL at random, compared turn by turn with an uninterrupted run. It
// has no code of its own; see chaos_test.go and docs/RECOVERY.md.
package chaos
