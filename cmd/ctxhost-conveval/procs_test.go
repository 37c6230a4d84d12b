package main

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"
)

// roleEnv names what the test binary is when TestMain starts it again:
// "parent" (the command, starting a child and waiting for a signal) or
// "child" (a stand-in that announces an address and waits).
const roleEnv = "CTXHOST_CONVEVAL_TEST_ROLE"

// procsRole runs the test binary as the parent or the child of the tests
// below when roleEnv says so, and never returns then.
func procsRole() {
	switch os.Getenv(roleEnv) {
	case "child":
		fmt.Fprintln(os.Stderr, "listening on http://127.0.0.1:1")
		time.Sleep(time.Hour)
		os.Exit(0)
	case "parent":
		stopOnSignal()
		dir, err := tempDir("ctxhost-conveval-test-")
		if err != nil {
			fmt.Println("error", err)
			os.Exit(3)
		}
		os.Setenv(roleEnv, "child")
		p, _, err := start(dir, os.Args[0])
		if err != nil {
			fmt.Println("error", err)
			os.Exit(3)
		}
		fmt.Println(p.cmd.Process.Pid, dir)
		time.Sleep(time.Hour)
		os.Exit(0)
	}
}

// startParent runs the test binary as the command with one child and
// answers it, the child's pid and the command's temporary directory.
func startParent(t *testing.T) (*exec.Cmd, int, string) {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), roleEnv+"=parent")
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	line, err := bufio.NewReader(out).ReadString('\n')
	if err != nil {
		t.Fatalf("the parent did not start its child: %v", err)
	}
	var pid int
	var dir string
	if _, err := fmt.Sscan(line, &pid, &dir); err != nil {
		t.Fatalf("the parent said %q", line)
	}
	t.Cleanup(func() {
		if p, err := os.FindProcess(pid); err == nil {
			_ = p.Kill()
		}
		_ = os.RemoveAll(dir)
	})
	if !alive(t, pid) {
		t.Fatalf("the child %d is not running", pid)
	}
	return cmd, pid, dir
}

// alive reports whether process pid runs (a zombie has ended), from
// /proc.
func alive(t *testing.T, pid int) bool {
	t.Helper()
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if errors.Is(err, os.ErrNotExist) {
		return false
	}
	if err != nil {
		t.Fatal(err)
	}
	_, after, _ := strings.Cut(string(data), ") ")
	return !strings.HasPrefix(after, "Z") && !strings.HasPrefix(after, "X")
}

// waitEnded waits (at most a minute, the machine may be busy) for pid to
// end.
func waitEnded(t *testing.T, pid int, what string) {
	t.Helper()
	for deadline := time.Now().Add(time.Minute); alive(t, pid); {
		if time.Now().After(deadline) {
			t.Fatalf("%s: the child %d still runs a minute on", what, pid)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func requireProc(t *testing.T) {
	t.Helper()
	if _, err := os.Stat("/proc/self/stat"); err != nil {
		t.Skip("no /proc: the test reads a child's state there")
	}
}

// TestSignalStopsChildren: SIGINT or SIGTERM to the command stops its
// children (stand-ins and serves), removes its temporary directories and
// exits with 128 + the signal.
func TestSignalStopsChildren(t *testing.T) {
	requireProc(t)
	for _, sig := range []syscall.Signal{syscall.SIGTERM, syscall.SIGINT} {
		t.Run(sig.String(), func(t *testing.T) {
			cmd, pid, dir := startParent(t)
			if err := cmd.Process.Signal(sig); err != nil {
				t.Fatal(err)
			}
			exited := make(chan error, 1)
			go func() { exited <- cmd.Wait() }()
			var err error
			select {
			case err = <-exited:
			case <-time.After(time.Minute):
				t.Fatal("the command did not exit a minute after the signal")
			}
			var ee *exec.ExitError
			if !errors.As(err, &ee) || ee.ExitCode() != 128+int(sig) {
				t.Errorf("the command ended with %v, want exit status %d", err, 128+int(sig))
			}
			waitEnded(t, pid, sig.String())
			if _, err := os.Stat(dir); !errors.Is(err, os.ErrNotExist) {
				t.Errorf("the temporary directory %s is still there (%v)", dir, err)
			}
		})
	}
}

// TestKilledParentKillsChildren: a command killed outright (SIGKILL, no
// handler runs) takes its children with it (the parent-death signal).
func TestKilledParentKillsChildren(t *testing.T) {
	requireProc(t)
	if procAttr() == nil {
		t.Skip("no parent-death signal on this system")
	}
	cmd, pid, _ := startParent(t)
	if err := cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	_ = cmd.Wait()
	waitEnded(t, pid, "SIGKILL")
}
