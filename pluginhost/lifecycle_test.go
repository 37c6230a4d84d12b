package pluginhost_test

import (
	"bufio"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/ctxhost/ctxhost/pluginhost"
	"github.com/hashicorp/go-hclog"
)

const hostHelperEnv = "CTXHOST_TEST_HOST_HELPER"

// hostHelper launches two plugins from path, prints their pids and waits
// to be killed.
func hostHelper(path string) {
	for _, name := range []string{"a", "b"} {
		c, err := pluginhost.Launch(context.Background(), pluginhost.Spec{Name: name, Kind: pluginhost.KindContext,
			Path: path, Logger: hclog.NewNullLogger()})
		if err != nil {
			fmt.Println("error", err)
			os.Exit(1)
		}
		fmt.Println("pid", c.Pid())
	}
	fmt.Println("ready")
	time.Sleep(time.Hour)
}

// alive reports whether pid runs (a zombie waiting to be reaped is dead).
func alive(pid int) bool {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return false
	}
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	return i < 0 || i+2 >= len(s) || (s[i+2] != 'Z' && s[i+2] != 'X')
}

// A host killed with SIGKILL takes its plugins with it.
func TestPluginsDieWithKilledHost(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("the parent-death signal is Linux only")
	}
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), hostHelperEnv+"="+testPlugin)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Process.Kill()
	var pids []int
	sc := bufio.NewScanner(out)
	for sc.Scan() && sc.Text() != "ready" {
		var pid int
		if _, err := fmt.Sscanf(sc.Text(), "pid %d", &pid); err != nil {
			t.Fatalf("helper said %q", sc.Text())
		}
		pids = append(pids, pid)
	}
	if len(pids) != 2 || !alive(pids[0]) || !alive(pids[1]) {
		t.Fatalf("plugins %v not running", pids)
	}
	if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	_ = cmd.Wait()
	for _, pid := range pids {
		waitFor(t, fmt.Sprintf("plugin %d to die with its host", pid), func() bool { return !alive(pid) })
	}
}

// The bytes that run are the bytes that were verified,
// even when the file is replaced between the check and the start.
func TestPinnedBinarySwappedAfterCheckStillRunsVerifiedBytes(t *testing.T) {
	dir := t.TempDir()
	good, err := os.ReadFile(testPlugin)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "plugin")
	if err := os.WriteFile(path, good, 0o755); err != nil {
		t.Fatal(err)
	}
	evil := filepath.Join(dir, "evil")
	if err := os.WriteFile(evil, []byte("#!/bin/sh\necho not the pinned plugin\nsleep 5\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(good)
	pluginhost.SetAfterVerify(func() {
		if err := os.Rename(evil, path); err != nil {
			t.Error(err)
		}
	})
	defer pluginhost.SetAfterVerify(nil)
	s := spec("pinned")
	s.Path, s.SHA256 = path, hex.EncodeToString(sum[:])
	c, err := pluginhost.Launch(context.Background(), s)
	if err != nil {
		t.Fatalf("launch after the swap: %v (the swapped file ran)", err)
	}
	defer c.Kill()
	if c.Context.Info().Name != "echo" {
		t.Errorf("ran %q", c.Context.Info().Name)
	}
	// The next launch checks the swapped file and refuses it.
	pluginhost.SetAfterVerify(nil)
	if _, err := pluginhost.Launch(context.Background(), s); err == nil || !strings.Contains(err.Error(), "checksum") {
		t.Errorf("swapped binary launched: %v", err)
	}
}

// Kill returns even when the plugin hangs (here: is
// stopped), killing it after the shutdown bound.
func TestKillOfHungPluginIsBounded(t *testing.T) {
	s := spec("hung")
	s.ShutdownTimeout = 200 * time.Millisecond
	c, err := pluginhost.Launch(context.Background(), s)
	if err != nil {
		t.Fatal(err)
	}
	if err := syscall.Kill(c.Pid(), syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() { c.Kill(); close(done) }()
	select {
	case <-done:
	case <-time.After(60 * time.Second):
		_ = syscall.Kill(c.Pid(), syscall.SIGKILL)
		t.Fatal("Kill of a stopped plugin did not return")
	}
	if alive(c.Pid()) {
		t.Errorf("plugin still running after Kill")
	}
}
