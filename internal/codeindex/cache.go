package codeindex

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/gob"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"
)

// parseCacheVersion changes whenever what a parse gives changes (the
// grammars' queries, Tags) or the file's layout does: a cache of another
// version is not used.
const parseCacheVersion = 2

// racyWindow is how close to the cache's writing a file's modification
// time may be for its cached hash to be trusted without reading it: a
// file changed in the same clock tick as the cache was written (a coarse
// file system's second) could keep its size and time with new content,
// so such a file is read and hashed again.
const racyWindow = 2 * time.Second

// cachedParse is what the parse cache keeps of one file: the stat it was
// read with, its content hash, its line count and the parse of that
// content (nil for a file without a grammar).
type cachedParse struct {
	Size    int64
	ModTime int64
	Hash    string
	Lines   int
	Tags    *Tags
	Err     string
}

// parseCache is the parse cache file's content, followed on disk by the
// sha256 of its encoding.
type parseCache struct {
	Version int
	Written int64 // unix nanoseconds, when the cache was made
	Files   map[string]cachedParse
}

// trusted reports whether the file at s can be taken from c without
// reading it: the same size and modification time, and that time
// older than the cache by more than racyWindow.
func (c cachedParse) trusted(s FileStat, written int64) bool {
	return c.Hash != "" && c.Size == s.Size && c.ModTime == s.ModTime && s.ModTime < written-int64(racyWindow)
}

// readParseCache reads a cache file; a missing file gives none, a
// damaged one (its checksum does not match) or one of another version
// gives none and an error saying why.
func readParseCache(path string) (*parseCache, error) {
	b, err := os.ReadFile(path)
	if os.IsNotExist(err) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read parse cache %s: %w", path, err)
	}
	if len(b) < sha256.Size {
		return nil, fmt.Errorf("read parse cache %s: truncated", path)
	}
	body, sum := b[:len(b)-sha256.Size], b[len(b)-sha256.Size:]
	if got := sha256.Sum256(body); !bytes.Equal(got[:], sum) {
		return nil, fmt.Errorf("read parse cache %s: checksum mismatch", path)
	}
	var c parseCache
	if err := gob.NewDecoder(bytes.NewReader(body)).Decode(&c); err != nil {
		return nil, fmt.Errorf("read parse cache %s: %w", path, err)
	}
	if c.Version != parseCacheVersion {
		return nil, fmt.Errorf("read parse cache %s: version %d, want %d", path, c.Version, parseCacheVersion)
	}
	return &c, nil
}

// cacheable reports whether f has anything the cache keeps: a content
// hash (files too large or not text are stat'ed again, nothing more).
func cacheable(f *File) bool { return f.Hash != "" }

// writeParseCache writes the parses of files to path (through a
// temporary file renamed into place: a reader never sees half a cache),
// ending with a checksum.
func writeParseCache(path string, files []*File) error {
	c := parseCache{Version: parseCacheVersion, Written: time.Now().UnixNano(), Files: make(map[string]cachedParse, len(files))}
	for _, f := range files {
		if cacheable(f) {
			c.Files[f.Path] = cachedParse{Size: f.Size, ModTime: f.ModTime, Hash: f.Hash, Lines: f.Lines, Tags: f.Tags, Err: f.Err}
		}
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return fmt.Errorf("write parse cache: %w", err)
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), ".parses-*")
	if err != nil {
		return fmt.Errorf("write parse cache: %w", err)
	}
	h := sha256.New()
	w := bufio.NewWriter(tmp)
	err = gob.NewEncoder(io.MultiWriter(w, h)).Encode(&c)
	if err == nil {
		_, err = w.Write(h.Sum(nil))
	}
	if err == nil {
		err = w.Flush()
	}
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp.Name(), path)
	}
	if err != nil {
		_ = os.Remove(tmp.Name())
		return fmt.Errorf("write parse cache %s: %w", path, err)
	}
	return nil
}
