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
	"path"
	"regexp"
	"strings"

	"github.com/ctxhost/ctxhost/internal/codeindex"
)

// Task is one localisation task.
type Task struct {
	Repo   string   `json:"repo"`
	Commit string   `json:"commit"`
	Parent string   `json:"parent"`
	Text   string   `json:"text"`
	Files  []string `json:"files"` // the source files the change touched
}

// Limits of a mined task.
const (
	maxAnswerFiles  = 3
	maxChangedFiles = 10
	minTaskWords    = 5
)

var (
	fixSubject  = regexp.MustCompile(`(?i)\b(fix(e[sd])?|bug|crash|error|incorrect|wrong|regression)\b`)
	skipSubject = regexp.MustCompile(`(?i)\b(typos?|lint|flake8|pylint|mypy|pre-commit|docs?|documentation|changelog|readme|ci|release|bump|version|formatting|style|whitespace|spelling|test(s|ing)?|type ?hints?|typing|annotations?|badges?|links?|deps|dependabot)\b`)
	urlPattern  = regexp.MustCompile(`https?://\S+`)
	filePattern = regexp.MustCompile(`[\w./-]*\w\.(py|pyi|go|js|jsx|mjs|ts|tsx|java|rs|rst|md|txt|cfg|toml|ya?ml|json|ini)\b`)
	prPattern   = regexp.MustCompile(`\(?#\d+\)?`)
	trailer     = regexp.MustCompile(`(?im)^(signed-off-by|co-authored-by|reviewed-by|change-id|fixes|closes|resolves|see|refs?):.*$`)
)

// CleanText removes what names files from a commit message or issue:
// URLs, file names, pull-request numbers and trailers.
func CleanText(msg string) string {
	msg = trailer.ReplaceAllString(msg, "")
	msg = urlPattern.ReplaceAllString(msg, "")
	msg = filePattern.ReplaceAllString(msg, "")
	msg = prPattern.ReplaceAllString(msg, "")
	var lines []string
	for _, l := range strings.Split(msg, "\n") {
		if l = strings.TrimRight(l, " \t"); strings.TrimSpace(l) != "" || (len(lines) > 0 && lines[len(lines)-1] != "") {
			lines = append(lines, l)
		}
	}
	return strings.TrimSpace(strings.Join(lines, "\n"))
}

// isSource reports whether path is code the context can show (it has a
// grammar) and not a test.
func isSource(p string) bool {
	if codeindex.LanguageOf(p) == nil {
		return false
	}
	base := path.Base(p)
	for _, part := range strings.Split(path.Dir(p), "/") {
		if part == "test" || part == "tests" || part == "testing" || part == "__tests__" || part == "docs" || part == "examples" {
			return false
		}
	}
	return !(strings.HasPrefix(base, "test_") || strings.HasSuffix(base, "_test.go") || strings.HasSuffix(base, "_test.py") ||
		strings.Contains(base, ".test.") || strings.Contains(base, ".spec.") || base == "conftest.py")
}

func git(repo string, args ...string) ([]byte, error) {
	cmd := exec.Command("git", append([]string{"-C", repo}, args...)...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("git %s: %v: %s", strings.Join(args, " "), err, strings.TrimSpace(stderr.String()))
	}
	return out, nil
}

// changedFiles lists the files commit modified (not added: the context of
// its parent cannot show a file that does not exist yet), and how many
// files it touched in all.
func changedFiles(repo, commit string) ([]string, int, error) {
	out, err := git(repo, "diff-tree", "--no-commit-id", "-r", "--name-status", "-M", commit+"^", commit)
	if err != nil {
		return nil, 0, err
	}
	var files []string
	total := 0
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		f := strings.Split(line, "\t")
		if len(f) < 2 {
			continue
		}
		total++
		if f[0] == "M" && isSource(f[1]) {
			files = append(files, f[1])
		}
	}
	return files, total, nil
}

// cmdTasks mines bug-fix commits: non-merge commits whose subject says
// fix (and not typo, docs, lint, tests...), that modify one to three
// source files and at most ten files in all; newest first.
func cmdTasks(args []string) error {
	fs := flag.NewFlagSet("tasks", flag.ExitOnError)
	repo := fs.String("repo", "", "local clone")
	n := fs.Int("n", 30, "tasks to write")
	name := fs.String("name", "", "repository name in the tasks (default: the clone's directory)")
	from := fs.String("from", "HEAD", "the newest commit mined (a run moves the clone's HEAD: name the commit to mine the same tasks again)")
	skip := fs.Int("skip", 0, "leave out this many of the newest tasks (to mine a second, older set)")
	fs.Parse(args)
	if *repo == "" {
		return fmt.Errorf("tasks: -repo is required")
	}
	if *name == "" {
		*name = path.Base(*repo)
	}
	out, err := git(*repo, "log", "--no-merges", "--format=%H%x00%P%x00%B%x01", *from)
	if err != nil {
		return err
	}
	w := bufio.NewWriter(os.Stdout)
	defer w.Flush()
	found := 0
	for _, rec := range strings.Split(string(out), "\x01") {
		parts := strings.SplitN(strings.TrimLeft(rec, "\n"), "\x00", 3)
		if len(parts) != 3 || strings.Contains(parts[1], " ") || parts[1] == "" {
			continue
		}
		subject := strings.SplitN(parts[2], "\n", 2)[0]
		if !fixSubject.MatchString(subject) || skipSubject.MatchString(subject) {
			continue
		}
		files, total, err := changedFiles(*repo, parts[0])
		if err != nil || len(files) == 0 || len(files) > maxAnswerFiles || total > maxChangedFiles {
			continue
		}
		text := CleanText(parts[2])
		if len(strings.Fields(text)) < minTaskWords {
			continue
		}
		if *skip > 0 {
			*skip--
			continue
		}
		if err := writeTask(w, Task{Repo: *name, Commit: parts[0], Parent: parts[1], Text: text, Files: files}); err != nil {
			return err
		}
		if found++; found == *n {
			break
		}
	}
	return nil
}

func writeTask(w io.Writer, t Task) error {
	b, err := json.Marshal(t)
	if err != nil {
		return err
	}
	_, err = fmt.Fprintf(w, "%s\n", b)
	return err
}

// cmdIssue writes one task from an issue's text and the commit that fixed it.
func cmdIssue(args []string) error {
	fs := flag.NewFlagSet("issue", flag.ExitOnError)
	repo := fs.String("repo", "", "local clone")
	commit := fs.String("commit", "", "the fixing commit")
	textFile := fs.String("text", "", "file with the issue's text")
	name := fs.String("name", "", "repository name in the task (default: the clone's directory)")
	fs.Parse(args)
	if *repo == "" || *commit == "" || *textFile == "" {
		return fmt.Errorf("issue: -repo, -commit and -text are required")
	}
	if *name == "" {
		*name = path.Base(*repo)
	}
	raw, err := os.ReadFile(*textFile)
	if err != nil {
		return err
	}
	files, _, err := changedFiles(*repo, *commit)
	if err != nil {
		return err
	}
	parent, err := git(*repo, "rev-parse", *commit+"^")
	if err != nil {
		return err
	}
	full, err := git(*repo, "rev-parse", *commit)
	if err != nil {
		return err
	}
	return writeTask(os.Stdout, Task{Repo: *name, Commit: strings.TrimSpace(string(full)), Parent: strings.TrimSpace(string(parent)), Text: CleanText(string(raw)), Files: files})
}

// readTasks reads JSON lines.
func readTasks(file string) ([]Task, error) {
	b, err := os.ReadFile(file)
	if err != nil {
		return nil, err
	}
	var out []Task
	for i, line := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		if strings.TrimSpace(line) == "" {
			continue
		}
		var t Task
		if err := json.Unmarshal([]byte(line), &t); err != nil {
			return nil, fmt.Errorf("%s:%d: %w", file, i+1, err)
		}
		out = append(out, t)
	}
	return out, nil
}
