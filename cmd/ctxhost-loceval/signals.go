package main

import (
	"fmt"
	"os"
	"sort"
	"text/tabwriter"

	"github.com/ctxhost/ctxhost/internal/codeindex"
	"github.com/ctxhost/ctxhost/internal/codeindex/repomap"
)

// signalRankings are file rankings of one task by each signal alone and
// by their fusions, for the signals table.
func (e *engine) signalRankings(g *repomap.Graph, t Task, ctxFiles, mapFiles, baseline []string) (map[string][]string, error) {
	out := map[string][]string{"context": ctxFiles, "map": mapFiles, "baseline": baseline}
	rs, err := e.chunks.Query(t.Text, 300, nil)
	if err != nil {
		return nil, err
	}
	best := map[string]float64{}
	var chunkFiles []string
	for _, r := range rs {
		if _, ok := best[r.Path]; !ok {
			chunkFiles = append(chunkFiles, r.Path)
			best[r.Path] = r.Score
		}
	}
	out["chunks"] = chunkFiles
	ranking := g.Rank(repomap.Focus{Text: t.Text})
	idx := make([]int, len(g.Files))
	for i := range idx {
		idx[i] = i
	}
	sort.SliceStable(idx, func(a, b int) bool { return ranking.FileRank[idx[a]] > ranking.FileRank[idx[b]] })
	var pr, prNoTest []string
	for _, i := range idx {
		pr = append(pr, g.Files[i].Path)
		if !codeindex.IsTestPath(g.Files[i].Path) {
			prNoTest = append(prNoTest, g.Files[i].Path)
		}
	}
	out["pagerank"] = pr
	out["pagerank-notest"] = prNoTest
	out["rrf(chunks,pagerank)"] = rrf(60, chunkFiles, prNoTest)
	out["rrf(chunks,map)"] = rrf(60, chunkFiles, mapFiles)
	out["rrf(chunks,pr,map)"] = rrf(60, chunkFiles, prNoTest, mapFiles)
	out["rrf10(chunks,pagerank)"] = rrf(10, chunkFiles, prNoTest)
	hits := map[string]bool{}
	rel := map[string]bool{}
	for _, f := range chunkFiles {
		hits[f] = true
		if best[f] >= 0.5*best[chunkFiles[0]] {
			rel[f] = true
		}
	}
	fused := keep(rrf(60, chunkFiles, prNoTest), hits)
	fusedRel := keep(rrf(60, chunkFiles, prNoTest), rel)
	out["fused-hits"] = fused
	out["fused-rel"] = fusedRel
	out["ctx-fused"] = rrf(1e9, head(fused, 5), mapFiles)
	out["ctx-fused"] = concatUnique(head(fused, 5), mapFiles)
	out["ctx-fused-rel"] = concatUnique(head(fusedRel, 5), mapFiles)
	return out, nil
}

// rrf fuses rankings by reciprocal rank: each file scores 1/(k+rank) in
// each ranking that has it.
func rrf(k float64, lists ...[]string) []string {
	score := map[string]float64{}
	var order []string
	for _, l := range lists {
		for i, f := range l {
			if _, ok := score[f]; !ok {
				order = append(order, f)
			}
			score[f] += 1 / (k + float64(i+1))
		}
	}
	sort.SliceStable(order, func(a, b int) bool { return score[order[a]] > score[order[b]] })
	return order
}

// rankStats are Hit@1, Hit@5 and MRR summed over tasks.
type rankStats struct{ hit1, hit5, mrr float64 }

func (s *rankStats) add(files []string, answer map[string]bool) {
	for i, f := range files {
		if answer[f] {
			s.mrr += 1 / float64(i+1)
			if i == 0 {
				s.hit1++
			}
			if i < 5 {
				s.hit5++
			}
			return
		}
	}
}

func reportSignals(repo string, n int, stats map[string]*rankStats) {
	names := make([]string, 0, len(stats))
	for k := range stats {
		names = append(names, k)
	}
	sort.Strings(names)
	w := tabwriter.NewWriter(os.Stdout, 0, 0, 2, ' ', 0)
	fmt.Fprintf(w, "signal\trepo\ttasks\tHit@1\tHit@5\tMRR\n")
	for _, k := range names {
		s := stats[k]
		fmt.Fprintf(w, "%s\t%s\t%d\t%.2f\t%.2f\t%.3f\n", k, repo, n, s.hit1/float64(n), s.hit5/float64(n), s.mrr/float64(n))
	}
	w.Flush()
}

func keep(files []string, set map[string]bool) []string {
	var out []string
	for _, f := range files {
		if set[f] {
			out = append(out, f)
		}
	}
	return out
}

func concatUnique(lists ...[]string) []string {
	seen := map[string]bool{}
	var out []string
	for _, l := range lists {
		for _, f := range l {
			if !seen[f] {
				seen[f] = true
				out = append(out, f)
			}
		}
	}
	return out
}
