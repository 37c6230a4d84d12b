package pluginhost

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
)

// verifiedBinary is a plugin binary whose bytes were checked against its
// pin: the process runs exactly those bytes, whatever happens to the path
// afterwards. On Linux the open, verified file descriptor itself is
// executed (through /proc/self/fd); elsewhere a private copy made while
// hashing is.
type verifiedBinary struct {
	// ExecPath is what to execute.
	ExecPath string
	cleanup  func()
}

// Close releases the descriptor or the private copy; call it once the
// process has started.
func (v *verifiedBinary) Close() {
	if v != nil && v.cleanup != nil {
		v.cleanup()
	}
}

// verifyBinary opens path once, hashes what it reads and compares it with
// the hex pin; it returns how to execute exactly the bytes it hashed.
func verifyBinary(path, pin string) (*verifiedBinary, error) {
	want, err := hex.DecodeString(pin)
	if err != nil || len(want) != sha256.Size {
		return nil, fmt.Errorf("sha256 %q is not 64 hex digits", pin)
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, ErrBinaryNotFound
	}
	if procFD(f) {
		h := sha256.New()
		if _, err := io.Copy(h, f); err != nil {
			f.Close()
			return nil, fmt.Errorf("%w: read: %v", ErrChecksumMismatch, err)
		}
		if !bytes.Equal(h.Sum(nil), want) {
			f.Close()
			return nil, ErrChecksumMismatch
		}
		return &verifiedBinary{ExecPath: "/proc/self/fd/" + strconv.Itoa(int(f.Fd())), cleanup: func() { f.Close() }}, nil
	}
	defer f.Close()
	return privateCopy(f, want)
}

// procFD reports whether f can be executed through /proc/self/fd.
func procFD(f *os.File) bool {
	st, err := os.Stat("/proc/self/fd/" + strconv.Itoa(int(f.Fd())))
	return err == nil && st.Mode().IsRegular()
}

// privateCopy copies f into a new private directory while hashing it.
func privateCopy(f *os.File, want []byte) (*verifiedBinary, error) {
	dir, err := os.MkdirTemp("", "ctxhost-plugin-*")
	if err != nil {
		return nil, fmt.Errorf("private copy: %w", err)
	}
	fail := func(err error) (*verifiedBinary, error) { os.RemoveAll(dir); return nil, err }
	dst := filepath.Join(dir, "plugin")
	out, err := os.OpenFile(dst, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o700)
	if err != nil {
		return fail(fmt.Errorf("private copy: %w", err))
	}
	h := sha256.New()
	_, err = io.Copy(io.MultiWriter(out, h), f)
	if cerr := out.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fail(fmt.Errorf("private copy: %w", err))
	}
	if !bytes.Equal(h.Sum(nil), want) {
		return fail(ErrChecksumMismatch)
	}
	return &verifiedBinary{ExecPath: dst, cleanup: func() { os.RemoveAll(dir) }}, nil
}
