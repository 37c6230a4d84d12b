// Package supervise keeps plugin and assembler processes running: a Keeper
// holds the current instance of a process and relaunches it, paced by a
// Backoff, when a call finds it dead (ErrDead) or it may hold a change
// nobody acknowledged; RetryDead makes a call once more on the relaunched
// instance. It knows no transport and no plugin kind: the host wraps a
// Keeper for a context plugin (with its sessions' state kept and restored)
// and for an assembler, the engine paces optional plugins' start-up with
// StartBackoff, and pluginhost's clients answer ErrDead and Abort.
//
// The retry policy, in one place. Every call to a plugin or an assembler
// process, and every launch of one, follows it:
//
//   - A call that found its process dead (an error wrapping ErrDead) is
//     made once more, on a relaunched process: the dead one is killed, a
//     new one launched (RelaunchBackoff between failed attempts) and, for a
//     context plugin, configured and given back every session's state
//     (RetryDead; the host's Supervisor and AssemblerSupervisor).
//   - A call that changes nothing (Component, State, Assemble) cut off by
//     its own deadline while its caller still waits is made once more with
//     a fresh deadline; the turn carries a warning and a plugin:retried
//     event (the host's callRetryingOnce). One missed deadline on a loaded
//     machine does not change the turn.
//   - A call that may change state (Apply, Compact, Prepared, Restore) is
//     never made again on the process its deadline cut it off in: the
//     plugin may still apply it, so its process is replaced and given the
//     acknowledged state back (Keeper.Relaunch). A compaction is then made
//     once more, on the new process, when that state is the one from before
//     the call; the turn warns that it was retried, or that the compaction
//     was discarded when it is cut off again.
//   - An optional plugin that failed to start for a reason that may pass
//     (a crash or a timeout during the handshake) is launched again at
//     start-up (StartBackoff); a required one fails the start at once.
package supervise
