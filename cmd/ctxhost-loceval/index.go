package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"time"

	"github.com/ctxhost/ctxhost/internal/codeindex"
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
	fs.Parse(args)
	if *repo == "" {
		return fmt.Errorf("index: -repo is required")
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

	start := time.Now()
	live, err := codeindex.NewLive(*repo, 0)
	if err != nil {
		return err
	}
	if _, err := live.Current(context.Background(), false); err != nil {
		return err
	}
	parse := time.Since(start)
	files := live.Files()
	parsed, defs := 0, 0
	for _, f := range files {
		if f.Tags != nil {
			parsed++
			defs += len(f.Tags.Definitions)
		}
	}
	start = time.Now()
	g := repomap.Build(files)
	graph := time.Since(start)
	heapMap := heapMB()
	fmt.Printf("files %d (parsed %d, definitions %d)\n", len(files), parsed, defs)
	fmt.Printf("first index: parse %v, graph %v; heap after GC %d MB (repository map)\n", parse.Round(time.Millisecond), graph.Round(time.Millisecond), heapMap)

	start = time.Now()
	chunks, err := search.Open(filepath.Join(work, "chunks"))
	if err != nil {
		return err
	}
	st, err := chunks.Sync(live.Index)
	if err != nil {
		return err
	}
	sync := time.Since(start)
	fmt.Printf("chunk index: %d chunks of %d files in %v; heap after GC %d MB (map and search in one process)\n", st.Chunks, st.Indexed, sync.Round(time.Millisecond), heapMB())

	// warm renders for a few different focuses
	texts := []string{"fix the error raised when the value is missing", "add an option to configure the timeout",
		"the parser crashes on empty input", "rename the default handler", "memory grows when many requests are made"}
	var renders []time.Duration
	for i := range 20 {
		start = time.Now()
		g.Rank(repomap.Focus{Text: texts[i%len(texts)]}).Render(repomap.RenderOptions{MaxTokens: *mapTokens, Count: counter.Count, MaxDefs: -1})
		renders = append(renders, time.Since(start))
	}
	fmt.Printf("warm map rank+render (%d tokens): median %v\n", *mapTokens, median(renders))

	// one changed file: the largest parsed file gets a new function
	var target *codeindex.File
	for _, f := range files {
		if f.Tags != nil && (target == nil || f.Size > target.Size) {
			target = f
		}
	}
	if target == nil {
		return nil
	}
	full := filepath.Join(*repo, filepath.FromSlash(target.Path))
	orig, err := os.ReadFile(full)
	if err != nil {
		return err
	}
	defer os.WriteFile(full, orig, 0o644)
	addition := "\n\n" + functionIn(target.Tags.Language) + "\n"
	if err := os.WriteFile(full, append(append([]byte(nil), orig...), addition...), 0o644); err != nil {
		return err
	}
	start = time.Now()
	ch, err := live.Current(context.Background(), true)
	_ = ch
	if err != nil {
		return err
	}
	reparse := time.Since(start)
	start = time.Now()
	st, err = chunks.Sync(live.Index)
	if err != nil {
		return err
	}
	resync := time.Since(start)
	start = time.Now()
	repomap.Build(live.Files())
	regraph := time.Since(start)
	fmt.Printf("one changed file (%s, %d KB): walk+parse %v, chunk index %v (%d file), graph %v\n", target.Path, target.Size/1024,
		reparse.Round(time.Millisecond/10), resync.Round(time.Millisecond/10), st.Indexed, regraph.Round(time.Millisecond/10))
	fmt.Printf("max RSS %d MB\n", maxRSS()/1024)
	return chunks.Close()
}

// functionIn is a small function in language lang.
func functionIn(lang string) string {
	switch lang {
	case "python":
		return "def loceval_added(value):\n    return value"
	case "go":
		return "func locevalAdded(v int) int { return v }"
	case "rust":
		return "fn loceval_added(v: i32) -> i32 { v }"
	case "java":
		return "// loceval_added"
	}
	return strings.TrimSpace("function locevalAdded(v) { return v }")
}

func heapMB() uint64 {
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.HeapInuse >> 20
}
