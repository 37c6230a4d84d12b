package main

import (
	"encoding/json"
	"regexp"
	"strings"
)

// The identifiers a conversation states, found by the harness's own
// rules (not ctxhost's): e-mail addresses, dates, and the words that mix
// letters and digits (ids, codes, references) or are numbers of four
// digits or more (amounts, card ends, years).
var (
	emailRe  = regexp.MustCompile(`[A-Za-z0-9._%+-]+@[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)+`)
	isoDate  = regexp.MustCompile(`\b\d{4}-\d{2}-\d{2}\b`)
	nameDate = regexp.MustCompile(`\b(?:Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec)[a-z]* \d{1,2}(?:st|nd|rd|th)?\b`)
	wordRe   = regexp.MustCompile(`#?[A-Za-z0-9][A-Za-z0-9_-]*[A-Za-z0-9]|\d+(?:[.,]\d+)+`)
	digitRe  = regexp.MustCompile(`\d`)
	letterRe = regexp.MustCompile(`[A-Za-z]`)
)

// factsOf adds the identifiers stated in text to into.
func factsOf(text string, into map[string]bool) {
	for _, re := range []*regexp.Regexp{emailRe, isoDate, nameDate} {
		for _, m := range re.FindAllString(text, -1) {
			into[m] = true
		}
	}
	for _, w := range wordRe.FindAllString(text, -1) {
		digits := len(digitRe.FindAllString(w, -1))
		switch {
		case digits == 0:
		case letterRe.MatchString(w) && len(w) >= 5: // an id or a code
			into[w] = true
		case !letterRe.MatchString(w) && digits >= 4: // a number
			into[w] = true
		}
	}
}

// upstream is what went upstream, joined, to find texts in.
type upstream string

// has reports whether s went upstream whole: as it is, or as a JSON
// string's body (a tool's result some APIs carry as JSON).
func (u upstream) has(s string) bool {
	if strings.Contains(string(u), s) {
		return true
	}
	var b strings.Builder
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(s)
	q := strings.TrimSuffix(b.String(), "\n")
	return strings.Contains(string(u), q[1:len(q)-1])
}
