package codeindex

import (
	"fmt"
	"sort"
	"strings"
	"sync"

	sitter "github.com/tree-sitter/go-tree-sitter"
)

// Definition is one named definition in a file.
type Definition struct {
	Name      string `json:"name"`
	Kind      string `json:"kind"`
	Signature string `json:"signature"` // the header up to its body, on one line
	Line      int    `json:"line"`      // first line, 1-based
	EndLine   int    `json:"end_line"`  // last line, 1-based
	Container string `json:"container"` // the enclosing definition's name, if any
	Depth     int    `json:"depth"`     // nesting among definitions, 0 at top level
}

// Tags are the definitions and references of one file.
type Tags struct {
	Language    string         `json:"language"`
	Definitions []Definition   `json:"definitions"`
	References  map[string]int `json:"references"` // identifier -> occurrences outside definition names
	Lines       int            `json:"lines"`
}

// maxSignature bounds a rendered signature in characters.
const maxSignature = 160

// grammar holds what parsing one language needs: its compiled query and a
// pool of parsers (a parser serves one goroutine at a time).
type grammar struct {
	lang     *sitter.Language
	query    *sitter.Query
	captures []string
	parsers  sync.Pool
}

var (
	grammarsMu sync.Mutex
	grammars   = map[string]*grammar{}
)

// query builds the tags query of l: one pattern per definition kind (the
// definition @def.KIND and its name @name) and one per identifier kind (@ref).
func (l *Language) query() string {
	var b strings.Builder
	kinds := make([]string, 0, len(l.defs))
	for k := range l.defs {
		kinds = append(kinds, k)
	}
	sort.Strings(kinds)
	for _, k := range kinds {
		fmt.Fprintf(&b, "(%s %s: (_) @name) @def\n", k, l.nameFieldOf(k))
	}
	for _, r := range l.refs {
		fmt.Fprintf(&b, "(%s) @ref\n", r)
	}
	return b.String()
}

func grammarOf(l *Language) (*grammar, error) {
	grammarsMu.Lock()
	defer grammarsMu.Unlock()
	if g, ok := grammars[l.Name]; ok {
		return g, nil
	}
	lang := sitter.NewLanguage(l.grammar())
	q, qerr := sitter.NewQuery(lang, l.query())
	if qerr != nil {
		return nil, fmt.Errorf("tags query of %s: %s", l.Name, qerr.Error())
	}
	g := &grammar{lang: lang, query: q, captures: q.CaptureNames()}
	g.parsers.New = func() any {
		p := sitter.NewParser()
		if err := p.SetLanguage(lang); err != nil {
			p.Close()
			return nil
		}
		return p
	}
	grammars[l.Name] = g
	return g, nil
}

// Parse extracts the tags of src, a file in language l.
func Parse(l *Language, src []byte) (*Tags, error) {
	g, err := grammarOf(l)
	if err != nil {
		return nil, err
	}
	p, _ := g.parsers.Get().(*sitter.Parser)
	if p == nil {
		return nil, fmt.Errorf("parse %s: grammar version not supported by the tree-sitter runtime", l.Name)
	}
	defer g.parsers.Put(p)
	tree := p.Parse(src, nil)
	if tree == nil {
		return nil, fmt.Errorf("parse %s: the parser gave no tree", l.Name)
	}
	defer tree.Close()
	qc := sitter.NewQueryCursor()
	defer qc.Close()

	tags := &Tags{Language: l.Name, References: map[string]int{}, Lines: countLines(src)}
	nameAt := map[uint]bool{}
	type ref struct {
		start uint
		name  string
	}
	var refs []ref
	type span struct{ start, end uint }
	var spans []span
	matches := qc.Matches(g.query, tree.RootNode(), src)
	for m := matches.Next(); m != nil; m = matches.Next() {
		var def, name *sitter.Node
		for i := range m.Captures {
			c := &m.Captures[i]
			switch g.captures[c.Index] {
			case "def":
				def = &c.Node
			case "name":
				name = &c.Node
			case "ref":
				refs = append(refs, ref{c.Node.StartByte(), c.Node.Utf8Text(src)})
			}
		}
		if def == nil || name == nil {
			continue
		}
		nameAt[name.StartByte()] = true
		d := Definition{
			Name:      firstLine(name.Utf8Text(src)),
			Kind:      l.defs[def.Kind()],
			Signature: signature(def, src),
			Line:      int(def.StartPosition().Row) + 1,
			EndLine:   int(def.EndPosition().Row) + 1,
		}
		tags.Definitions = append(tags.Definitions, d)
		spans = append(spans, span{def.StartByte(), def.EndByte()})
	}
	for _, r := range refs {
		if !nameAt[r.start] && r.name != "" {
			tags.References[r.name]++
		}
	}
	order := make([]int, len(spans))
	for i := range order {
		order[i] = i
	}
	sort.SliceStable(order, func(a, b int) bool {
		x, y := spans[order[a]], spans[order[b]]
		return x.start < y.start || (x.start == y.start && x.end > y.end)
	})
	defs := make([]Definition, len(order))
	sorted := make([]span, len(order))
	for i, o := range order {
		defs[i], sorted[i] = tags.Definitions[o], spans[o]
	}
	tags.Definitions = defs
	nest(l, tags.Definitions, func(i int) (uint, uint) { return sorted[i].start, sorted[i].end })
	return tags, nil
}

// nest sets Container and Depth from the definitions' byte spans (matches
// come in document order, so an enclosing definition comes first), and
// turns functions inside container kinds into methods.
func nest(l *Language, defs []Definition, span func(int) (uint, uint)) {
	var stack []int
	for i := range defs {
		s, e := span(i)
		for len(stack) > 0 {
			_, pe := span(stack[len(stack)-1])
			if s < pe && e <= pe {
				break
			}
			stack = stack[:len(stack)-1]
		}
		if len(stack) > 0 {
			parent := &defs[stack[len(stack)-1]]
			defs[i].Container, defs[i].Depth = parent.Name, len(stack)
			if defs[i].Kind == KindFunction && l.isContainer(parent.Kind) {
				defs[i].Kind = KindMethod
			}
		}
		stack = append(stack, i)
	}
}

// signature is a definition's text up to its body (or its first line),
// whitespace collapsed, bounded to maxSignature characters.
func signature(def *sitter.Node, src []byte) string {
	end := def.EndByte()
	if body := def.ChildByFieldName("body"); body != nil {
		end = body.StartByte()
	}
	text := string(src[def.StartByte():end])
	if def.ChildByFieldName("body") == nil {
		text = firstLine(text)
	}
	text = strings.Join(strings.Fields(text), " ")
	if def.Kind() == "type_spec" {
		text = "type " + text // Go: the keyword belongs to the enclosing declaration
	}
	text = strings.TrimRight(text, " {:")
	if len(text) > maxSignature {
		cut := maxSignature
		for cut > 0 && (text[cut]&0xC0) == 0x80 {
			cut--
		}
		text = text[:cut] + " …"
	}
	return text
}

func firstLine(s string) string {
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		return strings.TrimRight(s[:i], "\r")
	}
	return s
}

func countLines(src []byte) int {
	if len(src) == 0 {
		return 0
	}
	n := strings.Count(string(src), "\n")
	if src[len(src)-1] != '\n' {
		n++
	}
	return n
}
