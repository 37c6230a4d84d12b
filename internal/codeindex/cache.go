package codeindex

import (
	"bufio"
	"encoding/gob"
	"fmt"
	"os"
	"path/filepath"
)

// parseCacheVersion changes whenever what a parse gives changes (the
// grammars' queries, Tags): a cache of another version is not used.
const parseCacheVersion = 1

// cachedParse is what the parse cache keeps of one file: its content
// hash and the parse of that content.
type cachedParse struct {
	Hash string
	Tags *Tags
	Err  string
}

// parseCache is the parse cache file's content.
type parseCache struct {
	Version int
	Files   map[string]cachedParse
}

// readParseCache reads the parses a cache file holds; a missing file
// gives none, a damaged one or one of another version gives none and an
// error saying why.
func readParseCache(path string) (map[string]cachedParse, error) {
	f, err := os.Open(path)
	if os.IsNotExist(err) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read parse cache %s: %w", path, err)
	}
	defer f.Close()
	var c parseCache
	if err := gob.NewDecoder(bufio.NewReader(f)).Decode(&c); err != nil {
		return nil, fmt.Errorf("read parse cache %s: %w", path, err)
	}
	if c.Version != parseCacheVersion {
		return nil, fmt.Errorf("read parse cache %s: version %d, want %d", path, c.Version, parseCacheVersion)
	}
	return c.Files, nil
}

// writeParseCache writes the parses of files to path (through a
// temporary file renamed into place: a reader never sees half a cache).
func writeParseCache(path string, files []*File) error {
	c := parseCache{Version: parseCacheVersion, Files: make(map[string]cachedParse, len(files))}
	for _, f := range files {
		if f.Hash != "" && (f.Tags != nil || f.Err != "") {
			c.Files[f.Path] = cachedParse{Hash: f.Hash, Tags: f.Tags, Err: f.Err}
		}
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return fmt.Errorf("write parse cache: %w", err)
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), ".parses-*")
	if err != nil {
		return fmt.Errorf("write parse cache: %w", err)
	}
	w := bufio.NewWriter(tmp)
	err = gob.NewEncoder(w).Encode(&c)
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
