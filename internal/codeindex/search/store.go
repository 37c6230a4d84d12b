package search

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"os"
	"path/filepath"
	"sort"
	"sync"
)

// indexFileName is the file an index directory holds.
const indexFileName = "chunks.idx"

// indexMagic opens an index file of this version.
const indexMagic = "ctxhost code search index 1\n"

// savedIndex is what a save writes: the term names and the files. Chunks
// never change once indexed, and a term's name never changes, so a save
// reads them without the index's lock.
type savedIndex struct {
	wholeFiles bool
	terms      []string
	files      []*fileDoc
}

// saved is the state to write (under ix.mu).
func (ix *Index) saved() *savedIndex {
	s := &savedIndex{wholeFiles: ix.opts.WholeFiles, terms: ix.termStr[:len(ix.termStr):len(ix.termStr)]}
	s.files = make([]*fileDoc, 0, len(ix.files))
	for _, f := range ix.files {
		s.files = append(s.files, f)
	}
	sort.Slice(s.files, func(i, j int) bool { return s.files[i].path < s.files[j].path })
	return s
}

// saver writes the newest state in the background, one write at a time:
// states that arrive while one is written are coalesced into the last.
type saver struct {
	mu      sync.Mutex
	pending *savedIndex
	path    string
	running bool
	done    *sync.Cond
	err     error
}

func (s *saver) save(path string, st *savedIndex) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.pending, s.path = st, path
	if s.running {
		return
	}
	s.running = true
	go s.loop()
}

func (s *saver) loop() {
	for {
		s.mu.Lock()
		st, path := s.pending, s.path
		s.pending = nil
		if st == nil {
			s.running = false
			if s.done != nil {
				s.done.Broadcast()
			}
			s.mu.Unlock()
			return
		}
		s.mu.Unlock()
		err := writeIndexFile(path, st)
		s.mu.Lock()
		s.err = err
		s.mu.Unlock()
	}
}

// wait returns once nothing is left to write, with the last write's error.
func (s *saver) wait() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.done == nil {
		s.done = sync.NewCond(&s.mu)
	}
	for s.running {
		s.done.Wait()
	}
	return s.err
}

// writeIndexFile writes st to path atomically (a temporary file renamed
// over it), ending with a checksum of everything before it.
func writeIndexFile(path string, st *savedIndex) error {
	tmp, err := os.CreateTemp(filepath.Dir(path), ".chunks-*.tmp")
	if err != nil {
		return fmt.Errorf("save code search index: %w", err)
	}
	defer os.Remove(tmp.Name())
	sum := crc32.NewIEEE()
	w := bufio.NewWriterSize(io.MultiWriter(tmp, sum), 1<<16)
	var buf [binary.MaxVarintLen64]byte
	u := func(v uint64) { w.Write(buf[:binary.PutUvarint(buf[:], v)]) }
	str := func(s string) { u(uint64(len(s))); w.WriteString(s) }
	w.WriteString(indexMagic)
	u(b2u(st.wholeFiles))
	u(uint64(len(st.terms)))
	for _, t := range st.terms {
		str(t)
	}
	u(uint64(len(st.files)))
	for _, f := range st.files {
		str(f.path)
		str(f.hash)
		u(b2u(f.generated))
		u(uint64(len(f.docs)))
		for _, c := range f.docs {
			u(uint64(c.line))
			u(uint64(c.endLine))
			str(c.kind)
			str(c.symbol)
			u(uint64(c.length))
			u(uint64(len(c.terms)))
			for i, id := range c.terms {
				u(uint64(id))
				u(uint64(c.tfs[i]))
			}
			u(uint64(len(c.sym)))
			for _, id := range c.sym {
				u(uint64(id))
			}
		}
	}
	if err := w.Flush(); err != nil {
		tmp.Close()
		return fmt.Errorf("save code search index: %w", err)
	}
	binary.Write(tmp, binary.LittleEndian, sum.Sum32())
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("save code search index: %w", err)
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		return fmt.Errorf("save code search index: %w", err)
	}
	return nil
}

func b2u(b bool) uint64 {
	if b {
		return 1
	}
	return 0
}

// errDamaged is a file that is not a whole index of this version.
var errDamaged = errors.New("not a whole index of this version")

// loadIndexFile indexes in ix (empty) the files an index file holds,
// with the file's numbering of terms (no term is looked up by name but
// the paths'); os.ErrNotExist when there is none, errDamaged (wrapped)
// when it is cut short, altered or of another version or options, and
// then ix is left partly filled: the caller starts again from empty.
func loadIndexFile(path string, opts Options, ix *Index) error {
	raw, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	if len(raw) < len(indexMagic)+4 || string(raw[:len(indexMagic)]) != indexMagic {
		return fmt.Errorf("%w: no header", errDamaged)
	}
	body := raw[:len(raw)-4]
	if crc32.ChecksumIEEE(body) != binary.LittleEndian.Uint32(raw[len(raw)-4:]) {
		return fmt.Errorf("%w: checksum", errDamaged)
	}
	r := &reader{b: body[len(indexMagic):]}
	if whole := r.u() == 1; whole != opts.WholeFiles {
		return fmt.Errorf("%w: indexed with other options", errDamaged)
	}
	nterms := r.n()
	for range nterms {
		t := r.s()
		if _, dup := ix.terms[t]; dup || r.bad {
			return fmt.Errorf("%w: malformed", errDamaged)
		}
		ix.termID(t)
	}
	// term reads a term id of the file's dictionary; ids of a chunk's
	// terms ascend
	term := func(after int64) uint32 {
		id := r.u()
		if id >= uint64(nterms) || int64(id) <= after {
			r.bad = true
			return 0
		}
		return uint32(id)
	}
	nfiles := r.n()
	for range nfiles {
		f := fileRecord{Path: r.s(), Hash: r.s(), Generated: r.u() == 1}
		chunks := make([]idChunk, r.n())
		for j := range chunks {
			c := idChunk{Line: int32(r.u()), EndLine: int32(r.u()), Kind: r.s(), Symbol: r.s(), Length: int32(r.u())}
			n := r.n()
			c.Terms, c.TFs = make([]uint32, n), make([]uint16, n)
			last := int64(-1)
			for k := range n {
				c.Terms[k], c.TFs[k] = term(last), uint16(r.u())
				last = int64(c.Terms[k])
			}
			c.Sym = make([]uint32, r.n())
			for k := range c.Sym {
				c.Sym[k] = term(-1)
			}
			chunks[j] = c
		}
		if r.bad {
			break
		}
		if _, dup := ix.files[f.Path]; dup {
			return fmt.Errorf("%w: malformed", errDamaged)
		}
		ix.addIDs(f, chunks)
	}
	if r.bad || len(r.b) != 0 {
		return fmt.Errorf("%w: malformed", errDamaged)
	}
	return nil
}

type reader struct {
	b   []byte
	bad bool
}

func (r *reader) u() uint64 {
	v, n := binary.Uvarint(r.b)
	if n <= 0 {
		r.bad = true
		r.b = nil
		return 0
	}
	r.b = r.b[n:]
	return v
}

// n is a count, bounded by what is left to read.
func (r *reader) n() int {
	v := r.u()
	if v > uint64(len(r.b)) {
		r.bad = true
		r.b = nil
		return 0
	}
	return int(v)
}

func (r *reader) s() string {
	n := r.n()
	if n > len(r.b) {
		r.bad = true
		return ""
	}
	s := string(r.b[:n])
	r.b = r.b[n:]
	return s
}
