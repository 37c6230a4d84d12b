package main

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"
)

// stopGrace is how long a child is given to end after SIGTERM before it
// is killed.
const stopGrace = 30 * time.Second

// children are the processes start started that have not ended, and the
// temporary directories made for them, so that a signal to the command
// stops them all and removes the directories before it exits (a worker's
// deferred stop does not run when the command is ended by a signal).
var children = struct {
	sync.Mutex
	procs    map[*process]bool
	dirs     map[string]bool
	stopping bool
}{procs: map[*process]bool{}, dirs: map[string]bool{}}

// errStopping refuses a start once the command is being stopped.
var errStopping = errors.New("the command is stopping")

// tempDir makes a temporary directory as os.MkdirTemp, removed by
// removeTemp or, if the command is stopped by a signal first, then.
func tempDir(pattern string) (string, error) {
	dir, err := os.MkdirTemp("", pattern)
	if err != nil {
		return "", err
	}
	children.Lock()
	children.dirs[dir] = true
	children.Unlock()
	return dir, nil
}

// removeTemp removes a directory tempDir made.
func removeTemp(dir string) {
	children.Lock()
	delete(children.dirs, dir)
	children.Unlock()
	_ = os.RemoveAll(dir)
}

// stopOnSignal makes SIGINT and SIGTERM stop every child (SIGTERM, then
// SIGKILL after stopGrace, or at once on a second signal), remove the
// temporary directories and exit with status 128 + the signal's number.
// On Linux a child is killed by the kernel too when the command dies
// without a word (SIGKILL): see procAttr.
func stopOnSignal() {
	sigs := make(chan os.Signal, 2)
	signal.Notify(sigs, syscall.SIGINT, syscall.SIGTERM)
	go func() {
		sig := <-sigs
		fmt.Fprintf(os.Stderr, "ctxhost-conveval: %v: stopping the stand-ins and serves\n", sig)
		done := make(chan struct{})
		go func() { stopAll(stopGrace); close(done) }()
		select {
		case <-done:
		case <-sigs:
			stopAll(0)
		}
		code := 1
		if s, ok := sig.(syscall.Signal); ok {
			code = 128 + int(s)
		}
		os.Exit(code)
	}()
}

// stopAll refuses any further start, stops every child at once (killed
// after grace) and removes the temporary directories.
func stopAll(grace time.Duration) {
	children.Lock()
	children.stopping = true
	procs := make([]*process, 0, len(children.procs))
	for p := range children.procs {
		procs = append(procs, p)
	}
	dirs := make([]string, 0, len(children.dirs))
	for d := range children.dirs {
		dirs = append(dirs, d)
	}
	children.Unlock()
	var wg sync.WaitGroup
	for _, p := range procs {
		wg.Add(1)
		go func() { defer wg.Done(); p.stopWithin(grace) }()
	}
	wg.Wait()
	for _, d := range dirs {
		_ = os.RemoveAll(d)
	}
}

// process is a started child process the evaluation stops when done.
type process struct {
	cmd  *exec.Cmd
	done chan struct{}
}

// start runs name with args in dir and waits for its "listening on
// http://ADDR" line on stderr; it returns the address.
func start(dir, name string, args ...string) (*process, string, error) {
	cmd := exec.Command(name, args...)
	cmd.Dir = dir
	cmd.SysProcAttr = procAttr()
	stderr, err := cmd.StderrPipe()
	if err != nil {
		return nil, "", err
	}
	p := &process{cmd: cmd, done: make(chan struct{})}
	children.Lock()
	if children.stopping {
		children.Unlock()
		return nil, "", fmt.Errorf("start %s: %w", filepath.Base(name), errStopping)
	}
	err = cmd.Start()
	if err == nil {
		children.procs[p] = true
	}
	children.Unlock()
	if err != nil {
		return nil, "", fmt.Errorf("start %s: %w", filepath.Base(name), err)
	}
	addr := make(chan string, 1)
	var lines []string
	go func() {
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			if a, ok := strings.CutPrefix(sc.Text(), "listening on http://"); ok {
				addr <- a
				_, _ = io.Copy(io.Discard, stderr)
				break
			}
			lines = append(lines, sc.Text())
		}
		close(addr)
		_ = cmd.Wait()
		children.Lock()
		delete(children.procs, p)
		children.Unlock()
		close(p.done)
	}()
	a, ok := <-addr
	if !ok {
		<-p.done
		return nil, "", fmt.Errorf("%s did not start: %s", filepath.Base(name), strings.Join(lines, "\n"))
	}
	return p, a, nil
}

// stop ends the process with SIGTERM (SIGKILL after stopGrace) and waits.
func (p *process) stop() { p.stopWithin(stopGrace) }

// stopWithin ends the process with SIGTERM, SIGKILL after grace (at once
// when grace is 0), and waits for it.
func (p *process) stopWithin(grace time.Duration) {
	if grace > 0 {
		_ = p.cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-p.done:
			return
		case <-time.After(grace):
		}
	}
	_ = p.cmd.Process.Kill()
	<-p.done
}

// serveConfig is the configuration's text (an examples/callpath.hcl) at
// window tokens with reserve for the answer, counted with cl100k_base
// (the stand-in's count), every upstream at url.
func serveConfig(hcl string, window, reserve int, url string) (string, error) {
	for _, r := range [][2]string{
		{"context_window        = 200000", fmt.Sprintf("context_window        = %d", window)},
		{"reserved_for_response = 8192", fmt.Sprintf("reserved_for_response = %d", reserve)},
		{`encoding              = "o200k_base"`, `encoding              = "cl100k_base"`},
		{`base_url = "https://api.openai.com"`, fmt.Sprintf("base_url = %q", url)},
		{`base_url = "https://api.anthropic.com"`, fmt.Sprintf("base_url = %q", url)},
		{`base_url = "https://generativelanguage.googleapis.com"`, fmt.Sprintf("base_url = %q", url)},
	} {
		if !strings.Contains(hcl, r[0]) {
			return "", fmt.Errorf("the configuration has no %q to replace", r[0])
		}
		hcl = strings.Replace(hcl, r[0], r[1], 1)
	}
	return hcl, nil
}

// buildStandin builds the stand-in (internal/standin) from the module at
// root into dir.
func buildStandin(root, dir string) (string, error) {
	out := filepath.Join(dir, "ctxhost-standin")
	cmd := exec.Command("go", "build", "-o", out, "./internal/standin")
	cmd.Dir = root
	cmd.Stderr = os.Stderr
	if err := cmd.Run(); err != nil {
		return "", fmt.Errorf("build the stand-in: %w", err)
	}
	return out, nil
}
