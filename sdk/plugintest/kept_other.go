//go:build !(linux || darwin || freebsd || netbsd || openbsd || dragonfly)

package plugintest

// keptBinary keeps no binary between runs where there are no file locks
// it relies on: every binary is built afresh.
func keptBinary(out, pkg string) error { return errNotKept }

// ownedPrivate is never reached where no binary is kept.
func ownedPrivate(dir string) error { return errNotKept }
