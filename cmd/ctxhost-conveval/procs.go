package main

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"
)

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
	stderr, err := cmd.StderrPipe()
	if err != nil {
		return nil, "", err
	}
	if err := cmd.Start(); err != nil {
		return nil, "", fmt.Errorf("start %s: %w", filepath.Base(name), err)
	}
	p := &process{cmd: cmd, done: make(chan struct{})}
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
		close(p.done)
	}()
	a, ok := <-addr
	if !ok {
		<-p.done
		return nil, "", fmt.Errorf("%s did not start: %s", filepath.Base(name), strings.Join(lines, "\n"))
	}
	return p, a, nil
}

// stop ends the process with SIGTERM (SIGKILL after 30 s) and waits.
func (p *process) stop() {
	_ = p.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-p.done:
	case <-time.After(30 * time.Second):
		_ = p.cmd.Process.Kill()
		<-p.done
	}
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
