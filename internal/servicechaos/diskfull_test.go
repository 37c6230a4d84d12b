//go:build chaos && linux

package servicechaos

import (
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"sync/atomic"
	"syscall"
	"testing"
	"time"
	"unsafe"
)

// setFileSizeLimit sets the soft RLIMIT_FSIZE of process pid (the hard
// limit stays): a write past limit bytes into any file fails with EFBIG,
// as writes fail on a full disk. Only the soft limit is moved, so no
// privilege is needed to move it back. Go ignores SIGXFSZ, so the server
// sees the error and lives on.
func setFileSizeLimit(pid int, limit uint64) error {
	var old syscall.Rlimit
	if _, _, e := syscall.RawSyscall6(syscall.SYS_PRLIMIT64, uintptr(pid), syscall.RLIMIT_FSIZE, 0,
		uintptr(unsafe.Pointer(&old)), 0, 0); e != 0 {
		return fmt.Errorf("read RLIMIT_FSIZE of %d: %w", pid, e)
	}
	nl := syscall.Rlimit{Cur: min(limit, old.Max), Max: old.Max}
	if _, _, e := syscall.RawSyscall6(syscall.SYS_PRLIMIT64, uintptr(pid), syscall.RLIMIT_FSIZE,
		uintptr(unsafe.Pointer(&nl)), 0, 0, 0); e != 0 {
		return fmt.Errorf("set RLIMIT_FSIZE of %d: %w", pid, e)
	}
	return nil
}

// fullDisk fills the disk under the server again and again while the
// workers append: every 1.5 s the store's writes fail for 2 s, then
// succeed again. /readyz is asked in the middle of each spell and 1.5 s
// after it.
type fullDisk struct {
	fill, free func(r *loadRun) error
	spells     atomic.Int64
	notReady   atomic.Int64 // spells in which /readyz answered NOT_SERVING
	readyAgain atomic.Int64 // spells after which it answered SERVING again
}

func (d *fullDisk) during(r *loadRun, until time.Time) {
	for first := true; ; first = false {
		time.Sleep(1500 * time.Millisecond)
		if !first && ready(r.addr()) {
			d.readyAgain.Add(1)
		}
		if time.Now().Add(2 * time.Second).After(until) {
			return
		}
		r.mu.Lock()
		err := d.fill(r)
		r.mu.Unlock()
		if err != nil {
			r.t.Errorf("fill the disk: %v", err)
			return
		}
		d.spells.Add(1)
		time.Sleep(time.Second)
		if !ready(r.addr()) {
			d.notReady.Add(1)
		}
		time.Sleep(time.Second)
		r.mu.Lock()
		err = d.free(r)
		r.mu.Unlock()
		if err != nil {
			r.t.Errorf("free the disk: %v", err)
			return
		}
	}
}

// TestDiskFull appends under load while the store's disk fills and frees
// again, on SQLite and the file store, two ways: every write into a file
// past its first 4 KiB fails with EFBIG (a file size limit set on the
// server), and, where this process may mount one, a 64 MiB tmpfs filled
// up to its last byte (ENOSPC). A write that finds the disk full must
// answer UNAVAILABLE (never INTERNAL) and leave nothing of itself; its
// retry must succeed once there is room; nothing acknowledged may be lost
// or duplicated, checked after a kill -9 and a restart.
func TestDiskFull(t *testing.T) {
	for _, c := range []struct {
		name  string
		store func(dir string) string
	}{
		{"sqlite", func(dir string) string { return "sqlite:" + filepath.Join(dir, "ctxhost.db") }},
		{"files", func(dir string) string { return filepath.Join(dir, "store") + "/" }},
	} {
		t.Run("fsize/"+c.name, func(t *testing.T) {
			limit := &fullDisk{
				fill: func(r *loadRun) error { return setFileSizeLimit(r.srv.cmd.Process.Pid, 4096) },
				free: func(r *loadRun) error { return setFileSizeLimit(r.srv.cmd.Process.Pid, ^uint64(0)) },
			}
			diskFullRun(t, c.store(t.TempDir()), limit)
		})
		t.Run("tmpfs/"+c.name, func(t *testing.T) {
			dir := smallTmpfs(t, 64<<20)
			filler := filepath.Join(dir, "filler")
			tmpfs := &fullDisk{
				fill: func(*loadRun) error { return fillUp(filler) },
				free: func(*loadRun) error { return os.Remove(filler) },
			}
			diskFullRun(t, c.store(dir), tmpfs)
		})
	}
}

func diskFullRun(t *testing.T, store string, d *fullDisk) {
	r := runLoadWith(t, store, loadOptions{during: d.during, seconds: envInt("CTXHOST_CHAOS_DISK_SECONDS", 10)})
	unavailable := r.answers.get("unavailable")
	t.Logf("REPORT %s: the disk full %d times for 2 s: %d writes answered unavailable and retried; /readyz NOT_SERVING in %d of the spells, SERVING again after %d",
		t.Name(), d.spells.Load(), unavailable, d.notReady.Load(), d.readyAgain.Load())
	if d.spells.Load() == 0 || unavailable == 0 {
		t.Errorf("the disk was full %d times and %d writes were refused: the scenario did not happen", d.spells.Load(), unavailable)
	}
	if d.notReady.Load() == 0 {
		t.Errorf("/readyz answered SERVING in every spell of a full disk")
	}
	if d.readyAgain.Load() != d.spells.Load() {
		t.Errorf("/readyz answered SERVING again after %d of %d spells of a full disk", d.readyAgain.Load(), d.spells.Load())
	}
	// With room again, a new session takes writes.
	if a := call(r.addr(), "CreateSession", mustJSON(map[string]any{"sessionId": "after"})); a.status != 200 {
		t.Errorf("create after the disk had room again: HTTP %d %s", a.status, a.raw)
	}
}

// smallTmpfs mounts a tmpfs of size bytes for the test, or skips the test
// when this process may not mount one (it needs root).
func smallTmpfs(t *testing.T, size int) string {
	dir := t.TempDir()
	if err := syscall.Mount("tmpfs", dir, "tmpfs", 0, fmt.Sprintf("size=%d,mode=0700", size)); err != nil {
		t.Skipf("a full disk on a small tmpfs needs the right to mount one (root): %v", err)
	}
	t.Cleanup(func() {
		if err := syscall.Unmount(dir, syscall.MNT_DETACH); err != nil {
			t.Errorf("unmount %s: %v", dir, err)
		}
	})
	return dir
}

// fillUp writes path until its file system has no byte left.
func fillUp(path string) error {
	f, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o600)
	if err != nil {
		return err
	}
	defer f.Close()
	buf := make([]byte, 64<<10)
	for len(buf) > 0 {
		if _, err := f.Write(buf); err != nil {
			if !errors.Is(err, syscall.ENOSPC) {
				return err
			}
			buf = buf[:len(buf)/2]
		}
	}
	return nil
}

// ready reports whether the server at addr answers /readyz with SERVING.
func ready(addr string) bool {
	res, err := httpClient.Get("http://" + addr + "/readyz")
	if err != nil {
		return false
	}
	defer res.Body.Close()
	_, _ = io.Copy(io.Discard, res.Body)
	return res.StatusCode == http.StatusOK
}
