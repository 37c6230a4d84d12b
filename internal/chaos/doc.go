// Package chaos holds the crash-consistency test of the host: a long
// replay through the real plugin processes while they are killed with
// SIGKILL at random, compared turn by turn with an uninterrupted run
// (chaos_test.go and docs/RECOVERY.md); and FullStore, a store whose disk
// fills up on demand, for tests of what a call does when its save fails.
package chaos
