package main

import (
	"bufio"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"sort"
	"strings"

	"github.com/ctxhost/ctxhost/internal/codeindex"
)

// section is one part of the summary: a title and its items (paragraphs
// or lines), most important first.
type section struct {
	Title string
	Items []string
}

// Limits of what is read.
const (
	maxOpeningBytes = 4000 // of each top-level document
	maxPackages     = 400
	maxPageTitles   = 200
)

// topDocs are the top-level documents summarised, in order, by name
// without extension (case-insensitive).
var topDocs = []string{"README", "ARCHITECTURE", "DESIGN", "CONTRIBUTING", "HACKING"}

// summarise reads the repository's documentation.
func summarise(root string) ([]section, error) {
	files, err := codeindex.Walk(root)
	if err != nil {
		return nil, err
	}
	var out []section
	for _, name := range topDocs {
		for _, f := range files {
			base := path.Base(f.Path)
			if f.Path != base || !strings.EqualFold(strings.TrimSuffix(base, path.Ext(base)), name) {
				continue
			}
			if items := opening(filepath.Join(root, f.Path)); len(items) > 0 {
				out = append(out, section{Title: f.Path, Items: items})
			}
			break
		}
	}
	if pages := pageTitles(root, files); len(pages) > 0 {
		out = append(out, section{Title: "Documentation pages", Items: pages})
	}
	if pkgs := packageDocs(root, files); len(pkgs) > 0 {
		out = append(out, section{Title: "Packages", Items: pkgs})
	}
	return out, nil
}

// opening is the first paragraphs of a document, up to maxOpeningBytes.
func opening(file string) []string {
	b, err := os.ReadFile(file)
	if err != nil {
		return nil
	}
	text := strings.ReplaceAll(string(b), "\r\n", "\n")
	var items []string
	size := 0
	for _, p := range strings.Split(text, "\n\n") {
		p = strings.TrimSpace(p)
		if p == "" || strings.HasPrefix(p, "<!--") || strings.HasPrefix(p, "[![") {
			continue
		}
		if size+len(p) > maxOpeningBytes && len(items) > 0 {
			break
		}
		items = append(items, p)
		size += len(p)
	}
	return items
}

var heading = regexp.MustCompile(`^(#{1,2} +(.+)|(.+)\n[=]{3,})`)

// pageTitles are "path: title" of the pages under docs/ (Markdown and
// reStructuredText), by path.
func pageTitles(root string, files []codeindex.FileStat) []string {
	var out []string
	for _, f := range files {
		ext := path.Ext(f.Path)
		if !strings.HasPrefix(f.Path, "docs/") || (ext != ".md" && ext != ".rst") || len(out) == maxPageTitles {
			continue
		}
		if t := titleOf(filepath.Join(root, f.Path)); t != "" {
			out = append(out, f.Path+": "+t)
		}
	}
	return out
}

// titleOf is a page's first heading.
func titleOf(file string) string {
	fh, err := os.Open(file)
	if err != nil {
		return ""
	}
	defer fh.Close()
	sc := bufio.NewScanner(fh)
	prev := ""
	for n := 0; sc.Scan() && n < 40; n++ {
		line := strings.TrimRight(sc.Text(), " ")
		if strings.HasPrefix(line, "# ") || strings.HasPrefix(line, "## ") {
			return strings.TrimSpace(strings.TrimLeft(line, "#"))
		}
		if prev != "" && len(line) >= 3 && strings.Trim(line, "=-~*") == "" {
			return strings.TrimSpace(prev)
		}
		prev = line
	}
	return ""
}

// packageDocs are "dir: first sentence" for every Go package with a
// package comment and every Python package with a module docstring in its
// __init__.py; test directories are left out.
func packageDocs(root string, files []codeindex.FileStat) []string {
	docs := map[string]string{}
	for _, f := range files {
		dir := path.Dir(f.Path)
		if docs[dir] != "" || codeindex.IsTestPath(f.Path) {
			continue
		}
		var d string
		switch {
		case strings.HasSuffix(f.Path, ".go"):
			d = goPackageDoc(filepath.Join(root, f.Path))
		case path.Base(f.Path) == "__init__.py":
			d = pythonDocstring(filepath.Join(root, f.Path))
		}
		if d != "" {
			docs[dir] = d
		}
	}
	dirs := make([]string, 0, len(docs))
	for d := range docs {
		dirs = append(dirs, d)
	}
	sort.Strings(dirs)
	if len(dirs) > maxPackages {
		dirs = dirs[:maxPackages]
	}
	out := make([]string, len(dirs))
	for i, d := range dirs {
		out[i] = d + ": " + docs[d]
	}
	return out
}

// goPackageDoc is the first sentence of the comment right above the
// package clause when it starts with "Package " or "Command ".
func goPackageDoc(file string) string {
	b, err := os.ReadFile(file)
	if err != nil {
		return ""
	}
	var comment []string
	for _, line := range strings.Split(string(b), "\n") {
		t := strings.TrimSpace(line)
		switch {
		case strings.HasPrefix(t, "//"):
			comment = append(comment, strings.TrimSpace(strings.TrimPrefix(t, "//")))
		case strings.HasPrefix(t, "package "):
			text := strings.Join(comment, " ")
			if strings.HasPrefix(text, "Package ") || strings.HasPrefix(text, "Command ") {
				return firstSentence(text)
			}
			return ""
		default:
			comment = nil
		}
	}
	return ""
}

// pythonDocstring is the first sentence of a module's docstring.
func pythonDocstring(file string) string {
	b, err := os.ReadFile(file)
	if err != nil {
		return ""
	}
	text := strings.TrimSpace(string(b))
	for strings.HasPrefix(text, "#") {
		_, rest, _ := strings.Cut(text, "\n")
		text = strings.TrimSpace(rest)
	}
	for _, q := range []string{`"""`, `'''`} {
		if strings.HasPrefix(text, q) {
			body, _, ok := strings.Cut(text[3:], q)
			if ok {
				return firstSentence(strings.Join(strings.Fields(body), " "))
			}
		}
	}
	return ""
}

func firstSentence(s string) string {
	if i := strings.Index(s, ". "); i >= 0 {
		s = s[:i+1]
	}
	if len(s) > 200 {
		s = s[:200] + "…"
	}
	return s
}
