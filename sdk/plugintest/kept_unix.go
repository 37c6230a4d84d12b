//go:build linux || darwin || freebsd || netbsd || openbsd || dragonfly

package plugintest

import (
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
)

// keptBinary builds pkg into its kept copy (keptDir, keptKey) under an
// exclusive lock on that copy, so that two test processes never link it
// at once, and hard-links the copy to out (or copies it where a link
// cannot be made).
func keptBinary(out, pkg string) error {
	dir, err := keptDir()
	if err != nil {
		return err
	}
	key, err := keptKey(pkg, filepath.Base(out))
	if err != nil {
		return fmt.Errorf("%w: %v", errNotKept, err)
	}
	lock, err := os.OpenFile(filepath.Join(dir, key+".lock"), os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return fmt.Errorf("%w: %v", errNotKept, err)
	}
	defer lock.Close()
	if err := syscall.Flock(int(lock.Fd()), syscall.LOCK_EX); err != nil {
		return fmt.Errorf("%w: lock: %v", errNotKept, err)
	}
	defer syscall.Flock(int(lock.Fd()), syscall.LOCK_UN)
	if err := os.MkdirAll(filepath.Join(dir, key), 0o700); err != nil {
		return fmt.Errorf("%w: %v", errNotKept, err)
	}
	kept := filepath.Join(dir, key, filepath.Base(out))
	if msg, err := exec.Command("go", "build", "-o", kept, pkg).CombinedOutput(); err != nil {
		return fmt.Errorf("go build -o %s %s: %w\n%s", filepath.Base(out), pkg, err, msg)
	}
	if err := os.Link(kept, out); err == nil {
		return nil
	}
	return copyExecutable(out, kept)
}

// copyExecutable copies the file src to a new executable file dst.
func copyExecutable(dst, src string) error {
	in, err := os.Open(src)
	if err != nil {
		return fmt.Errorf("copy %s: %w", src, err)
	}
	defer in.Close()
	f, err := os.OpenFile(dst, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o755)
	if err != nil {
		return fmt.Errorf("copy %s: %w", src, err)
	}
	if _, err := io.Copy(f, in); err != nil {
		f.Close()
		return fmt.Errorf("copy %s to %s: %w", src, dst, err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("copy %s to %s: %w", src, dst, err)
	}
	return nil
}

// ownedPrivate checks that dir is a directory of this user that no one
// else may write to (the kept binaries are run from it).
func ownedPrivate(dir string) error {
	fi, err := os.Lstat(dir)
	if err != nil {
		return err
	}
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !fi.IsDir() || !ok || int(st.Uid) != os.Getuid() || fi.Mode().Perm()&0o022 != 0 {
		return fmt.Errorf("not a private directory of user %d", os.Getuid())
	}
	return nil
}
