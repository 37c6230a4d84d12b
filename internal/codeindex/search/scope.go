package search

import (
	"regexp"
	"strings"
	"unicode"

	"github.com/ctxhost/ctxhost/internal/codeindex"
)

// A task's subject often starts by naming the part of the code it is
// about: "fix(complete): ...", "feat(context)!: ..." (conventional
// commits), "reverseproxy: ...", "net/http, mime: ..." (the Go and
// kernel style). That scope is matched against the files' paths.
var (
	conventionalScope = regexp.MustCompile(`^\s*[A-Za-z]+\(([^()\n]{1,80})\)!?:\s`)
	componentScope    = regexp.MustCompile(`^\s*([\w.\-/]+(?:\s*,\s*[\w.\-/]+)*):\s`)
)

// commitTypes are the types of conventional commits and words of the
// kind: as a subject's bare prefix ("fix: ...") they name no component.
var commitTypes = setOf("fix fixes fixed feat feature chore refactor perf docs doc test tests build ci style revert bug bugfix hotfix fixup wip " +
	"breaking deps dep security sec release misc cleanup improvement enhancement change update internal minor major patch note todo")

// taskScopes returns the components the first line of a task names as
// its scope, normalised (lower case, letters and digits; a path keeps
// its slashes).
func taskScopes(text string) []string {
	line, _, _ := strings.Cut(text, "\n")
	var raw string
	if m := conventionalScope.FindStringSubmatch(line); m != nil {
		raw = m[1]
	} else if m := componentScope.FindStringSubmatch(line); m != nil {
		raw = m[1]
	} else {
		return nil
	}
	var out []string
	for _, s := range strings.FieldsFunc(raw, func(r rune) bool { return r == ',' || r == ' ' || r == '|' || r == '+' }) {
		s = normScope(s)
		if s == "" || commitTypes[s] || len(s) < 2 {
			continue
		}
		out = append(out, s)
	}
	return out
}

// normScope lower-cases s and keeps its letters, digits and slashes.
func normScope(s string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(strings.Trim(s, "./")) {
		if r == '/' || r < unicode.MaxASCII && (unicode.IsLetter(r) || unicode.IsDigit(r)) {
			b.WriteRune(r)
		}
	}
	return b.String()
}

// pathInScope reports whether a file's path names scope: a directory or
// the file's name (without its extension) that is the scope, starts or
// ends with it (recover: recovery.go; pki: caddypki/) or has it as one of
// its words (complete: clap_complete/); a scope with slashes must be a
// run of the path's directories.
func pathInScope(p, scope string) bool {
	segs := strings.Split(strings.ToLower(pathText(p)), "/")
	if strings.Contains(scope, "/") {
		return strings.Contains("/"+strings.Join(segs, "/")+"/", "/"+scope+"/")
	}
	for _, seg := range segs {
		n := normScope(seg)
		if n == scope || len(scope) >= 3 && (strings.HasPrefix(n, scope) || strings.HasSuffix(n, scope)) {
			return true
		}
		for _, w := range codeindex.SplitIdentifier(seg) {
			if w == scope {
				return true
			}
		}
	}
	return false
}

// inScope returns the files in one of the scopes (a scope holding more
// than scopeShare of the files is left out: it says little).
func (ix *Index) inScope(scopes []string) map[*fileDoc]bool {
	out := map[*fileDoc]bool{}
	for _, s := range scopes {
		var in []*fileDoc
		for p, f := range ix.files {
			if pathInScope(p, s) {
				in = append(in, f)
			}
		}
		if len(in) == 0 || float64(len(in)) > scopeShare*float64(len(ix.files)) {
			continue
		}
		for _, f := range in {
			out[f] = true
		}
	}
	return out
}

// wordPairs are the adjacent words of text, stemmed, as "a b".
func wordPairs(text string) map[string]bool {
	var words []string
	for _, id := range codeindex.Identifiers(text) {
		for _, w := range codeindex.SplitIdentifier(id) {
			words = append(words, stem(w))
		}
	}
	out := map[string]bool{}
	for i := 1; i < len(words); i++ {
		if words[i] != words[i-1] {
			out[words[i-1]+" "+words[i]] = true
		}
	}
	return out
}

// pathSpelled reports whether two adjacent parts of p (directories and
// the file's name without its extension, stemmed) are a pair of pairs.
func pathSpelled(p string, pairs map[string]bool) bool {
	prev := ""
	for _, seg := range strings.Split(pathText(p), "/") {
		s := stem(normScope(seg))
		if prev != "" && s != prev && pairs[prev+" "+s] {
			return true
		}
		prev = s
	}
	return false
}
