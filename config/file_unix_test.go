//go:build unix

package config

import (
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
)

// TestFileFunctionRefusesAFIFOWithoutBlocking: file() on a FIFO is refused
// once open; the open itself does not wait for a writer.
func TestFileFunctionRefusesAFIFOWithoutBlocking(t *testing.T) {
	dir := t.TempDir()
	if err := syscall.Mkfifo(filepath.Join(dir, "pipe"), 0o600); err != nil {
		t.Skipf("mkfifo: %v", err)
	}
	f, err := openConfined(dir, "pipe")
	if err == nil {
		_, err = readOpenTextFile(f)
		f.Close()
	}
	if err == nil || !strings.Contains(err.Error(), "not a regular file") {
		t.Fatalf("file(\"pipe\") = %v, want not a regular file", err)
	}
}

// TestFileFunctionConfinedWhileALinkIsSwapped: a relative path whose file
// is swapped for a link outside the directory, over and over while it is
// read, never yields the outside file's content: the check and the open
// are one operation on an os.Root.
func TestFileFunctionConfinedWhileALinkIsSwapped(t *testing.T) {
	root := t.TempDir()
	dir := filepath.Join(root, "conf")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	secret := filepath.Join(root, "secret.txt")
	if err := os.WriteFile(secret, []byte("outside"), 0o600); err != nil {
		t.Fatal(err)
	}
	inside := filepath.Join(dir, "inside.txt")
	if err := os.WriteFile(inside, []byte("inside"), 0o600); err != nil {
		t.Fatal(err)
	}
	name := filepath.Join(dir, "prompt.txt")
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() { // swap prompt.txt between a link inside and a link outside
		defer wg.Done()
		tmp := filepath.Join(dir, "next")
		for i := 0; ; i++ {
			select {
			case <-stop:
				return
			default:
			}
			target := inside
			if i%2 == 1 {
				target = secret
			}
			_ = os.Remove(tmp)
			if err := os.Symlink(target, tmp); err == nil {
				_ = os.Rename(tmp, name)
			}
		}
	}()
	defer func() { close(stop); wg.Wait() }()
	for i := 0; i < 2000; i++ {
		f, err := openConfined(dir, "prompt.txt")
		if err != nil {
			continue // the outside link, refused, or a moment with no file
		}
		text, err := readOpenTextFile(f)
		f.Close()
		if err == nil && text == "outside" {
			t.Fatalf("read %q through a relative path swapped to a link outside the directory", text)
		}
	}
}
