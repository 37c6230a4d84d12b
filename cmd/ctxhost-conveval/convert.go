package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
)

// gitSource is a git repository the material is read from, at one commit:
// a clone (bare or not), read with git itself, nothing checked out.
type gitSource struct {
	dir    string // the repository
	repo   string // its GitHub owner/name, the ids' prefix
	commit string // the commit read, resolved
}

// openSource is the repository at dir, read at rev (a clone's directory,
// or "DIR@REV" for a commit other than HEAD).
func openSource(arg, repo string) (*gitSource, error) {
	dir, rev := arg, "HEAD"
	if i := strings.LastIndex(arg, "@"); i > 0 {
		if st, err := os.Stat(arg[:i]); err == nil && st.IsDir() {
			dir, rev = arg[:i], arg[i+1:]
		}
	}
	s := &gitSource{dir: dir, repo: repo}
	out, err := s.git("rev-parse", "--verify", rev+"^{commit}")
	if err != nil {
		return nil, fmt.Errorf("%s (%s): %w", repo, arg, err)
	}
	s.commit = strings.TrimSpace(string(out))
	return s, nil
}

// git runs git in the repository and returns what it wrote.
func (s *gitSource) git(args ...string) ([]byte, error) {
	cmd := exec.Command("git", append([]string{"-C", s.dir}, args...)...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("git %s: %w: %s", strings.Join(args, " "), err, strings.TrimSpace(stderr.String()))
	}
	return out, nil
}

// show is the file at path at the source's commit (or the blob named).
func (s *gitSource) show(path string) ([]byte, error) {
	return s.git("show", s.commit+":"+path)
}

// id is the source id of a file of the repository: owner/name:path.
func (s *gitSource) id(path string) string { return s.repo + ":" + path }

// corpusFile is one file convert writes: a corpus (a shape's directory)
// and the conversations of one source.
type corpusFile struct {
	shape, name string
	lines       []corpusLine
	from        string // the material, for the sources list
}

// The numbers of the shapes' conversions (see docs/CONVERSATIONS.md).
const (
	hhMinHuman = 3   // hh-rlhf transcripts of at least this many human turns
	hhCount    = 300 // ... the first this many
	chatdevMin = 2   // ChatDev logs of at least this many replies
)

func cmdConvert(args []string) error {
	fs := flag.NewFlagSet("convert", flag.ExitOnError)
	out := fs.String("out", "", "the directory the corpora are written under (a directory a shape)")
	tau := fs.String("tau-bench", "", "a clone of github.com/sierra-research/tau-bench (DIR or DIR@COMMIT): the tools corpus")
	hh := fs.String("hh-rlhf", "", "a clone of github.com/anthropics/hh-rlhf: the assistant corpus")
	chatdev := fs.String("chatdev", "", "a clone of github.com/OpenBMB/ChatDev, with its history: the multi-agent corpus")
	aider := fs.String("aider", "", "a clone of github.com/Aider-AI/aider: the aider corpus")
	_ = fs.Parse(args)
	if *out == "" {
		return fmt.Errorf("convert: -out is required")
	}
	type job struct {
		arg, repo string
		conv      func(*gitSource) ([]corpusFile, error)
	}
	var files []corpusFile
	for _, j := range []job{
		{*tau, "sierra-research/tau-bench", convertTauBench},
		{*hh, "anthropics/hh-rlhf", convertHHRLHF},
		{*chatdev, "OpenBMB/ChatDev", convertChatDev},
		{*aider, "Aider-AI/aider", convertAider},
	} {
		if j.arg == "" {
			continue
		}
		src, err := openSource(j.arg, j.repo)
		if err != nil {
			return err
		}
		fs, err := j.conv(src)
		if err != nil {
			return fmt.Errorf("%s at %s: %w", j.repo, src.commit, err)
		}
		files = append(files, fs...)
	}
	if len(files) == 0 {
		return fmt.Errorf("convert: no material given (-tau-bench, -hh-rlhf, -chatdev, -aider)")
	}
	return writeCorpora(*out, files, os.Stdout)
}

// writeCorpora writes each file under out/SHAPE/NAME.jsonl and lists the
// material read in out/SOURCES, and on w what each corpus holds.
func writeCorpora(out string, files []corpusFile, w io.Writer) error {
	var sources strings.Builder
	count := map[string]int{}
	var shapes []string
	for _, f := range files {
		dir := filepath.Join(out, f.shape)
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return err
		}
		path := filepath.Join(dir, f.name+".jsonl")
		if err := writeLines(path, f.lines); err != nil {
			return err
		}
		if count[f.shape] == 0 {
			shapes = append(shapes, f.shape)
		}
		count[f.shape] += len(f.lines)
		fmt.Fprintf(&sources, "%s/%s.jsonl\t%d conversations\t%s\n", f.shape, f.name, len(f.lines), f.from)
	}
	if err := os.WriteFile(filepath.Join(out, "SOURCES"), []byte(sources.String()), 0o644); err != nil {
		return err
	}
	for _, s := range shapes {
		fmt.Fprintf(w, "%s: %d conversations\n", filepath.Join(out, s), count[s])
	}
	return nil
}

// writeLines writes a corpus file, a conversation a line.
func writeLines(path string, lines []corpusLine) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	bw := bufio.NewWriter(f)
	enc := json.NewEncoder(bw)
	enc.SetEscapeHTML(false)
	for _, l := range lines {
		if err := enc.Encode(l); err != nil {
			f.Close()
			return fmt.Errorf("%s: %s: %w", path, l.ID, err)
		}
	}
	if err := bw.Flush(); err != nil {
		f.Close()
		return fmt.Errorf("%s: %w", path, err)
	}
	return f.Close()
}

// convertTauBench is the tools corpus: the 200 gpt-4o airline runs as
// recorded, then the retail and airline few-shot runs.
func convertTauBench(s *gitSource) ([]corpusFile, error) {
	var lines []corpusLine
	var from []string
	for _, p := range []string{"historical_trajectories/gpt-4o-airline.json",
		"few_shot_data/MockRetailDomainEnv-few_shot.jsonl", "few_shot_data/MockAirlineDomainEnv-few_shot.jsonl"} {
		data, err := s.show(p)
		if err != nil {
			return nil, err
		}
		var ls []corpusLine
		if strings.HasSuffix(p, ".json") {
			ls, err = tauTrajectories(s.id(p), data)
		} else {
			ls, err = tauFewShot(s.id(p), data)
		}
		if err != nil {
			return nil, err
		}
		lines = append(lines, ls...)
		from = append(from, p)
	}
	return []corpusFile{{"tools", "tau-bench", lines, fmt.Sprintf("%s@%s:{%s}", s.repo, s.commit, strings.Join(from, ","))}}, nil
}

// convertHHRLHF is the assistant corpus.
func convertHHRLHF(s *gitSource) ([]corpusFile, error) {
	const p = "harmless-base/test.jsonl.gz"
	data, err := s.show(p)
	if err != nil {
		return nil, err
	}
	lines, err := hhRLHF(s.id(p), data, hhMinHuman, hhCount)
	if err != nil {
		return nil, err
	}
	return []corpusFile{{"assistant", "hh-rlhf", lines, fmt.Sprintf("%s@%s:%s (chosen, >= %d human turns, first %d)", s.repo, s.commit, p, hhMinHuman, hhCount)}}, nil
}

// convertChatDev is the multi-agent corpus: every WareHouse log the
// history of all the clone's refs holds (a mirror clone has the pull
// requests' too), each path at its last version, a content seen at
// another path once, those of at least chatdevMin replies, in the order
// of their paths.
func convertChatDev(s *gitSource) ([]corpusFile, error) {
	raw, err := s.git("log", "--all", "--raw", "--no-abbrev", "--no-renames", "--format=", "--", "WareHouse")
	if err != nil {
		return nil, err
	}
	blob := map[string]string{} // path: its last version
	var paths []string
	for _, l := range strings.Split(string(raw), "\n") {
		// :100644 100644 OLD NEW M\tpath (newest commit first)
		meta, path, ok := strings.Cut(l, "\t")
		f := strings.Fields(meta)
		if !ok || len(f) < 5 || !strings.HasSuffix(path, ".log") {
			continue
		}
		if _, seen := blob[path]; seen || strings.Trim(f[3], "0") == "" {
			continue // a later version seen, or deleted here: its last version comes older
		}
		blob[path] = f[3]
		paths = append(paths, path)
	}
	sort.Strings(paths)
	var lines []corpusLine
	logs, contents := 0, map[string]bool{}
	for _, p := range paths {
		b := blob[p]
		if contents[b] {
			continue
		}
		contents[b] = true
		logs++
		data, err := s.git("cat-file", "blob", b)
		if err != nil {
			return nil, err
		}
		if msgs, replies := chatdevLog(data); replies >= chatdevMin {
			lines = append(lines, corpusLine{ID: s.id(p), Messages: msgs})
		}
	}
	return []corpusFile{{"multi-agent", "chatdev", lines, fmt.Sprintf("%s (all refs, HEAD %s): history of WareHouse/*.log (%d logs, %d of >= %d replies)", s.repo, s.commit, logs, len(lines), chatdevMin)}}, nil
}

// convertAider is the aider corpus.
func convertAider(s *gitSource) ([]corpusFile, error) {
	const p = "tests/fixtures/chat-history.md"
	data, err := s.show(p)
	if err != nil {
		return nil, err
	}
	return []corpusFile{{"aider", "aider", aiderHistory(s.id(p), data), fmt.Sprintf("%s@%s:%s", s.repo, s.commit, p)}}, nil
}
