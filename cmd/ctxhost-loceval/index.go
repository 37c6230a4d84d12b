package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"runtime/pprof"
	"sort"
	"syscall"
	"time"

	"github.com/ctxhost/ctxhost/internal/codeindex"
	"github.com/ctxhost/ctxhost/internal/codeindex/codeindextest"
	"github.com/ctxhost/ctxhost/internal/codeindex/repomap"
	"github.com/ctxhost/ctxhost/internal/codeindex/search"
	"github.com/ctxhost/ctxhost/tokenizer"
)

// cmdIndex times the index of one clone: the first index (parse, chunk
// index, graph), the re-index after one file changes, warm map renders,
// and memory. The changed file is restored afterwards.
func cmdIndex(args []string) error {
	fs := flag.NewFlagSet("index", flag.ExitOnError)
	repo := fs.String("repo", "", "local clone")
	mapTokens := fs.Int("map-tokens", 2000, "repository map budget")
	profile := fs.String("render-profile", "", "write a CPU profile of the warm renders to this file")
	skipSearch := fs.Bool("no-search", false, "leave out the chunk index")
	generate := fs.Int("generate", 0, "write a generated repository of this many Python modules into -repo first (a new directory)")
	changed := fs.Int("changed", 100, "files changed at once for the last figure (as a checkout of another commit)")
	fs.Parse(args)
	if *repo == "" {
		return fmt.Errorf("index: -repo is required")
	}
	if *generate > 0 {
		if err := codeindextest.WriteFiles(*repo, codeindextest.LargeRepo(*generate, 1)); err != nil {
			return err
		}
	}
	work, err := os.MkdirTemp("", "loceval-index-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(work)
	counter, err := tokenizer.Get("cl100k_base")
	if err != nil {
		return err
	}

	m := measure()
	live, err := codeindex.NewLive(*repo, 0)
	if err != nil {
		return err
	}
	if _, err := live.Current(context.Background(), false); err != nil {
		return err
	}
	parse := m.done()
	files := live.Files()
	parsed, defs := 0, 0
	for _, f := range files {
		if f.Tags != nil {
			parsed++
			defs += len(f.Tags.Definitions)
		}
	}
	m = measure()
	g := repomap.Build(files)
	graph := m.done()
	heapMap := heapMB()
	fmt.Printf("files %d (parsed %d, definitions %d)\n", len(files), parsed, defs)
	fmt.Printf("first index: files %s, graph %s; heap after GC %d MB (repository map)\n", parse, graph, heapMap)

	dir := filepath.Join(work, "chunks")
	if *skipSearch {
		dir = "" // in memory, never synced
	}
	m = measure()
	chunks, err := search.Open(dir)
	if err != nil {
		return err
	}
	var st search.SyncStats
	if !*skipSearch {
		if st, err = chunks.Sync(live.Index); err != nil {
			return err
		}
	}
	sync := m.done()
	fmt.Printf("chunk index: %d chunks of %d files in %s; heap after GC %d MB (map and search in one process)\n", st.Chunks, st.Indexed, sync, heapMB())

	// warm renders for a few different focuses
	texts := []string{"fix the error raised when the value is missing", "add an option to configure the timeout",
		"the parser crashes on empty input", "rename the default handler", "memory grows when many requests are made"}
	var renders, cpus []time.Duration
	if *profile != "" {
		pf, err := os.Create(*profile)
		if err != nil {
			return err
		}
		if err := pprof.StartCPUProfile(pf); err != nil {
			return err
		}
		defer pf.Close()
	}
	for i := range 20 {
		m = measure()
		g.Rank(repomap.Focus{Text: texts[i%len(texts)]}).Render(repomap.RenderOptions{MaxTokens: *mapTokens, Count: counter.Count, MaxDefs: -1})
		sp := m.done()
		renders, cpus = append(renders, sp.wall), append(cpus, sp.cpu)
	}
	if *profile != "" {
		pprof.StopCPUProfile()
	}
	fmt.Printf("warm map rank+render (%d tokens), new focus: median %v (cpu %v)\n", *mapTokens, median(renders), median(cpus))
	ranked := g.Rank(repomap.Focus{Text: texts[0]})
	renders, cpus = nil, nil
	for range 20 {
		m = measure()
		ranked.Render(repomap.RenderOptions{MaxTokens: *mapTokens, Count: counter.Count, MaxDefs: -1})
		sp := m.done()
		renders, cpus = append(renders, sp.wall), append(cpus, sp.cpu)
	}
	fmt.Printf("warm map render, same focus (the plugin keeps the ranking): median %v (cpu %v)\n", median(renders), median(cpus))

	// one changed file: a parsed file of median size gets a new function
	var parsedFiles []*codeindex.File
	for _, f := range files {
		if f.Tags != nil {
			parsedFiles = append(parsedFiles, f)
		}
	}
	if len(parsedFiles) == 0 {
		return chunks.Close()
	}
	sort.Slice(parsedFiles, func(i, j int) bool { return parsedFiles[i].Size < parsedFiles[j].Size })
	target := parsedFiles[len(parsedFiles)/2]
	full := filepath.Join(*repo, filepath.FromSlash(target.Path))
	orig, err := os.ReadFile(full)
	if err != nil {
		return err
	}
	defer os.WriteFile(full, orig, 0o644)
	for round, how := range []string{"walk", "named"} {
		addition := fmt.Sprintf("\n\n%s\n", functionIn(target.Tags.Language, round))
		if err := os.WriteFile(full, append(append([]byte(nil), orig...), addition...), 0o644); err != nil {
			return err
		}
		m := measure()
		var changes codeindex.Changes
		if how == "walk" {
			changes, err = live.Index.Refresh()
		} else {
			changes, err = live.Index.RefreshFiles([]string{target.Path})
		}
		if err != nil {
			return err
		}
		reparse := m.done()
		m = measure()
		if !*skipSearch {
			if st, err = chunks.Sync(live.Index); err != nil {
				return err
			}
		}
		resync := m.done()
		m = measure()
		patched, complete := g.Update(live.Files(), changes)
		patch := m.done()
		m = measure()
		g = repomap.Build(live.Files())
		regraph := m.done()
		m = measure()
		patched.Rank(repomap.Focus{Text: texts[0]}).Render(repomap.RenderOptions{MaxTokens: *mapTokens, Count: counter.Count, MaxDefs: -1})
		remap := m.done()
		fmt.Printf("one changed file (%s, %d KB), found by %s: files %s, chunk index %s (%d file), graph patched %s (complete %v; built again %s), next map %s\n",
			target.Path, target.Size/1024, how, reparse, resync, st.Indexed, patch, complete, regraph, remap)
	}
	if err := changeMany(live, chunks, parsedFiles, *changed, *skipSearch); err != nil {
		return err
	}
	fmt.Printf("max RSS %d MB\n", maxRSS()/1024)
	return chunks.Close()
}

// changeMany changes n parsed files at once, as checking out another
// commit does, and times what the code search plugin does next: the walk
// and parse, the chunk index and the complete graph. The files are
// restored afterwards.
func changeMany(live *codeindex.Live, chunks *search.Index, parsed []*codeindex.File, n int, skipSearch bool) error {
	n = min(n, len(parsed))
	if n == 0 {
		return nil
	}
	step := max(len(parsed)/n, 1)
	var origs [][]byte
	var paths []string
	for i := 0; i < len(parsed) && len(paths) < n; i += step {
		f := parsed[i]
		full := filepath.Join(live.Root(), filepath.FromSlash(f.Path))
		orig, err := os.ReadFile(full)
		if err != nil {
			return err
		}
		paths, origs = append(paths, full), append(origs, orig)
		if err := os.WriteFile(full, append(append([]byte(nil), orig...), "\n\n"+functionIn(f.Tags.Language, 7)+"\n"...), 0o644); err != nil {
			return err
		}
	}
	defer func() {
		for i, p := range paths {
			os.WriteFile(p, origs[i], 0o644)
		}
	}()
	m := measure()
	if _, err := live.Index.Refresh(); err != nil {
		return err
	}
	walk := m.done()
	m = measure()
	st := search.SyncStats{}
	if !skipSearch {
		var err error
		if st, err = chunks.Sync(live.Index); err != nil {
			return err
		}
	}
	sync := m.done()
	m = measure()
	repomap.Build(live.Files())
	graph := m.done()
	fmt.Printf("%d changed files (a checkout): walk and parse %s, chunk index %s (%d files), graph %s; cpu in all %v\n",
		len(paths), walk, sync, st.Indexed, graph, (walk.cpu + sync.cpu + graph.cpu).Round(time.Millisecond))
	return nil
}

// span is a wall time and the CPU time of the process over it.
type span struct {
	wall, cpu time.Duration
}

func (s span) String() string {
	return fmt.Sprintf("%v (cpu %v)", s.wall.Round(time.Millisecond/10), s.cpu.Round(time.Millisecond/10))
}

type meter struct {
	start time.Time
	cpu   time.Duration
}

func measure() meter { return meter{start: time.Now(), cpu: cpuTime()} }

func (m meter) done() span { return span{wall: time.Since(m.start), cpu: cpuTime() - m.cpu} }

// cpuTime is the user and system time of the process so far.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// functionIn is a small function in language lang, named after n.
func functionIn(lang string, n int) string {
	switch lang {
	case "python":
		return fmt.Sprintf("def loceval_added_%d(value):\n    return value", n)
	case "go":
		return fmt.Sprintf("func locevalAdded%d(v int) int { return v }", n)
	case "rust":
		return fmt.Sprintf("fn loceval_added_%d(v: i32) -> i32 { v }", n)
	case "java":
		return fmt.Sprintf("// loceval_added_%d", n)
	}
	return fmt.Sprintf("function locevalAdded%d(v) { return v }", n)
}

func heapMB() uint64 {
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.HeapInuse >> 20
}
