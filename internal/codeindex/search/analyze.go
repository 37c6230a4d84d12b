package search

import (
	"strings"
	"unicode"

	porter "github.com/blevesearch/go-porterstemmer"

	"github.com/ctxhost/ctxhost/internal/codeindex"
)

// token is one term of a text and whether it is a compound identifier
// kept whole (parseDate as parsedate) rather than a word.
type token struct {
	term     string
	compound bool
}

// stopWords are English function words: they say nothing of where code is.
var stopWords = setOf("a an and are as at be but by for if in into is it no not of on or such that the their then there these they this to was will with " +
	"i we you he she me my our your its was were been being have has had do does did so than too very can could would should may might must " +
	"from up out over under again about after before when where which who whom what why how all any both each few more most other some own same only just also via")

// taskWords are words of bug reports and commit messages that name the
// change, not the code: matched in code they find comments at random.
var taskWords = setOf("fix fixes fixed fixing bug bugs issue issues closes close resolve resolves resolved regression correctly properly incorrectly " +
	"wrong broken instead now previously currently cause caused causes happen happens make makes made ensure allow allows prevent " +
	"add added adds remove removed removes change changed changes case cases work works working behavior behaviour handle handled handling")

func setOf(words string) map[string]bool {
	m := map[string]bool{}
	for _, w := range strings.Fields(words) {
		m[w] = true
	}
	return m
}

// stem is a word's index form: lower case, Porter-stemmed when it is
// letters alone.
func stem(w string) string {
	for _, r := range w {
		if r > unicode.MaxASCII || !unicode.IsLetter(r) {
			return w
		}
	}
	if len(w) <= 3 {
		return w
	}
	return string(porter.StemWithoutLowerCasing([]rune(w)))
}

// analyze returns the terms of text as the index holds them: each
// identifier's words (stop words left out, stemmed), and a compound
// identifier (parse_date, parseDate) also whole, lower-cased, with its
// underscores dropped, so that parse_date and parseDate meet.
func analyze(text string, visit func(token)) {
	for _, id := range codeindex.Identifiers(text) {
		words := codeindex.SplitIdentifier(id)
		switch {
		case len(words) == 0:
		case len(words) == 1:
			if w := words[0]; !stopWords[w] && len(w) > 1 {
				visit(token{term: stem(w)})
			}
		default:
			visit(token{term: strings.Join(words, ""), compound: true})
			for _, w := range words {
				if !stopWords[w] && len(w) > 1 {
					visit(token{term: stem(w)})
				}
			}
		}
	}
}
