package codeindex

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"sync"
	"sync/atomic"
)

// File is one file of an indexed repository.
type File struct {
	Path    string // slash-separated, relative to the root
	Size    int64
	ModTime int64
	Hash    string // sha256 of the content; empty when not read (too large or binary)
	Tags    *Tags  // nil when the file has no grammar or could not be parsed
	Lines   int
	Err     string // why the file could not be parsed, if it could not
}

// HasTags reports whether the file was parsed.
func (f *File) HasTags() bool { return f.Tags != nil }

// Options configure an Index.
type Options struct {
	MaxFileBytes int64 // 0 means DefaultMaxFileBytes
	Workers      int   // parsers run at once; 0 means GOMAXPROCS
	// ParseCache is a file where the parses are kept between processes:
	// the first Refresh parses only the files whose content is not in
	// it, and every Refresh that changed something writes it again. ""
	// keeps parses in memory only. A damaged cache is not used (Warning
	// says so) and is written again.
	ParseCache string
}

// Index is the parsed state of one repository, refreshed incrementally:
// a file is read again only when its size or modification time changed,
// and parsed again only when its content hash changed. It is safe for
// concurrent use.
type Index struct {
	root string
	opts Options

	mu      sync.RWMutex
	files   map[string]*File
	version uint64

	seeded  bool        // the parse cache was read
	seed    *parseCache // its parses, until the first Refresh is done
	warning string      // what was wrong with the parse cache
}

// Changes are the paths a Refresh added, changed (new content) and removed.
type Changes struct {
	Added, Changed, Removed []string
}

// Empty reports whether nothing changed.
func (c Changes) Empty() bool { return len(c.Added)+len(c.Changed)+len(c.Removed) == 0 }

// New returns an empty index of the repository at root; call Refresh.
func New(root string, opts Options) (*Index, error) {
	abs, err := filepath.Abs(root)
	if err != nil {
		return nil, fmt.Errorf("code index of %q: %w", root, err)
	}
	if opts.MaxFileBytes <= 0 {
		opts.MaxFileBytes = DefaultMaxFileBytes
	}
	if opts.Workers <= 0 {
		opts.Workers = runtime.GOMAXPROCS(0)
	}
	return &Index{root: abs, opts: opts, files: map[string]*File{}}, nil
}

// Root is the repository's absolute path.
func (ix *Index) Root() string { return ix.root }

// Version grows by one on every Refresh that changed something.
func (ix *Index) Version() uint64 {
	ix.mu.RLock()
	defer ix.mu.RUnlock()
	return ix.version
}

// Refresh walks the repository and brings the index up to date.
func (ix *Index) Refresh() (Changes, error) {
	stats, err := Walk(ix.root)
	if err != nil {
		return Changes{}, fmt.Errorf("refresh code index of %s: %w", ix.root, err)
	}
	ix.mu.RLock()
	var todo []FileStat
	seen := make(map[string]bool, len(stats))
	for _, s := range stats {
		seen[s.Path] = true
		if f, ok := ix.files[s.Path]; !ok || f.Size != s.Size || f.ModTime != s.ModTime {
			todo = append(todo, s)
		}
	}
	var removed []string
	for p := range ix.files {
		if !seen[p] {
			removed = append(removed, p)
		}
	}
	ix.mu.RUnlock()

	return ix.applyAndSave(todo, removed), nil
}

// applyAndSave is apply, with the parse cache read before the first one
// and written after any that changed something. The first refresh of a
// process adds every file: it writes the cache only when the files
// differ from it.
func (ix *Index) applyAndSave(todo []FileStat, removed []string) Changes {
	first := false
	if ix.opts.ParseCache != "" && !ix.seeded {
		seed, err := readParseCache(ix.opts.ParseCache)
		ix.mu.Lock()
		ix.seeded, ix.seed, first = true, seed, true
		if err != nil {
			ix.warning = fmt.Sprintf("%v: parsed again", err)
		}
		ix.mu.Unlock()
	}
	ch, touched := ix.apply(todo, removed)
	ix.mu.Lock()
	write := !ch.Empty() || touched
	if first && ix.seed != nil {
		write = !sameAsCache(ix.seed, ix.files)
	}
	ix.seed = nil
	ix.mu.Unlock()
	if ix.opts.ParseCache != "" && write {
		if err := writeParseCache(ix.opts.ParseCache, ix.Files()); err != nil {
			ix.mu.Lock()
			ix.warning = err.Error()
			ix.mu.Unlock()
		}
	}
	return ch
}

// sameAsCache reports whether c holds exactly the cacheable files of
// files, each with the same stat and content and trusted by its stat (a
// file too close to the cache's writing is not: writing the cache again
// lets the next process trust it).
func sameAsCache(c *parseCache, files map[string]*File) bool {
	n := 0
	for _, f := range files {
		if !cacheable(f) {
			continue
		}
		n++
		e, ok := c.Files[f.Path]
		if !ok || e.Hash != f.Hash || !e.trusted(FileStat{Path: f.Path, Size: f.Size, ModTime: f.ModTime}, c.Written) {
			return false
		}
	}
	return n == len(c.Files)
}

// Warning says what went wrong with the parse cache (damaged, of another
// version, not writable), "" when nothing: the index itself is complete.
func (ix *Index) Warning() string {
	ix.mu.RLock()
	defer ix.mu.RUnlock()
	return ix.warning
}

// apply loads todo and removes removed; a changed stat with the same
// content only updates the stat (touched says whether one did).
func (ix *Index) apply(todo []FileStat, removed []string) (ch Changes, touched bool) {
	loaded := ix.load(todo)
	ix.mu.Lock()
	defer ix.mu.Unlock()
	for _, f := range loaded {
		old, ok := ix.files[f.Path]
		switch {
		case !ok:
			ch.Added = append(ch.Added, f.Path)
		case old.Hash != f.Hash || f.Hash == "":
			ch.Changed = append(ch.Changed, f.Path)
		default:
			// touched, same content: keep the parse, note the new stat
			old.Size, old.ModTime = f.Size, f.ModTime
			touched = true
			continue
		}
		ix.files[f.Path] = f
	}
	sort.Strings(removed)
	for _, p := range removed {
		if _, ok := ix.files[p]; ok {
			delete(ix.files, p)
			ch.Removed = append(ch.Removed, p)
		}
	}
	sort.Strings(ch.Added)
	sort.Strings(ch.Changed)
	if !ch.Empty() {
		ix.version++
	}
	return ch, touched
}

// RefreshFiles brings the given files (relative paths) up to date
// without walking the repository: what an editor or agent that knows
// what it changed calls. A path that no longer exists is removed.
func (ix *Index) RefreshFiles(paths []string) (Changes, error) {
	var todo []FileStat
	var gone []string
	for _, p := range paths {
		p = filepath.ToSlash(filepath.Clean(p))
		info, err := os.Stat(filepath.Join(ix.root, filepath.FromSlash(p)))
		if err != nil || !info.Mode().IsRegular() {
			gone = append(gone, p)
			continue
		}
		todo = append(todo, FileStat{Path: p, Size: info.Size(), ModTime: info.ModTime().UnixNano()})
	}
	return ix.applyAndSave(todo, gone), nil
}

// load reads, hashes and parses files with opts.Workers goroutines; a
// file whose content is unchanged keeps its earlier parse.
func (ix *Index) load(todo []FileStat) []*File {
	out := make([]*File, len(todo))
	next := make(chan int)
	var wg sync.WaitGroup
	for range min(ix.opts.Workers, max(len(todo), 1)) {
		wg.Go(func() {
			for i := range next {
				out[i] = ix.loadOne(todo[i])
			}
		})
	}
	for i := range todo {
		next <- i
	}
	close(next)
	wg.Wait()
	return out
}

// parses counts the files parsed, reads the files read, for the tests of
// the parse cache.
var parses, reads atomic.Int64

func (ix *Index) loadOne(s FileStat) *File {
	f := &File{Path: s.Path, Size: s.Size, ModTime: s.ModTime}
	if s.Size > ix.opts.MaxFileBytes {
		f.Err = "larger than the size limit"
		return f
	}
	ix.mu.RLock()
	old := ix.files[s.Path]
	var cached cachedParse
	inCache := false
	if ix.seed != nil {
		cached, inCache = ix.seed.Files[s.Path]
		if inCache && cached.trusted(s, ix.seed.Written) {
			ix.mu.RUnlock()
			// the same size and time as when the cache was written, well
			// before it: the same content
			f.Hash, f.Lines, f.Tags, f.Err = cached.Hash, cached.Lines, cached.Tags, cached.Err
			return f
		}
	}
	ix.mu.RUnlock()
	reads.Add(1)
	src, text, err := readText(filepath.Join(ix.root, filepath.FromSlash(s.Path)))
	if err != nil {
		f.Err = err.Error()
		return f
	}
	if !text {
		f.Err = "not text"
		return f
	}
	sum := sha256.Sum256(src)
	f.Hash = hex.EncodeToString(sum[:])
	f.Lines = countLines(src)
	if old != nil && old.Hash == f.Hash {
		f.Tags, f.Err = old.Tags, old.Err
		return f
	}
	if inCache && cached.Hash == f.Hash {
		f.Tags, f.Err = cached.Tags, cached.Err
		return f
	}
	if l := LanguageOf(s.Path); l != nil {
		parses.Add(1)
		tags, err := Parse(l, src)
		if err != nil {
			f.Err = err.Error()
		} else {
			f.Tags = tags
		}
	}
	return f
}

// Files returns the indexed files sorted by path. The files are shared:
// callers must not change them.
func (ix *Index) Files() []*File {
	ix.mu.RLock()
	defer ix.mu.RUnlock()
	out := make([]*File, 0, len(ix.files))
	for _, f := range ix.files {
		out = append(out, f)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Path < out[j].Path })
	return out
}

// File returns the indexed file at path, or nil.
func (ix *Index) File(path string) *File {
	ix.mu.RLock()
	defer ix.mu.RUnlock()
	return ix.files[path]
}

// ReadFile reads a file of the repository by its relative path (which
// must stay inside the root).
func (ix *Index) ReadFile(path string) ([]byte, error) {
	clean := filepath.Clean(filepath.FromSlash(path))
	if filepath.IsAbs(clean) || clean == ".." || len(clean) > 2 && clean[:3] == ".."+string(filepath.Separator) {
		return nil, fmt.Errorf("read %q: path leaves the repository", path)
	}
	src, text, err := readText(filepath.Join(ix.root, clean))
	if err != nil {
		return nil, err
	}
	if !text {
		return nil, fmt.Errorf("read %q: not a text file", path)
	}
	return src, nil
}
