// Package facts finds, without a model, the facts a message states that
// an agent may need to quote back once the message is no longer shown
// whole: identifiers (user, order and reservation ids, codes, hashes),
// e-mail addresses, URLs, paths, dates, amounts, long numbers and
// versions, code names, the keys and id-like values of a JSON output,
// and of a numbered file view the file and the lines it showed
// ("src/app.py:1457-1556", not each line's number). Extraction is
// deterministic and linear in the text; a noise filter leaves out words,
// small numbers and what is only syntax, and never keeps the value of a
// key that names a secret (password, token, api_key, ...).
//
// The host keeps the facts of a masked output in its placeholder (Digest)
// and the facts of omitted and cut messages in a bounded component
// (Render); a Cache extracts each message once.
package facts

import (
	"encoding/json"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/ctxhost/ctxhost/sdk"
)

// Kind is what a fact is; a lower kind is worth more.
type Kind uint8

// Kinds of facts, strongest first.
const (
	KindView    Kind = iota // a numbered file view: path:first-last, the lines it showed
	KindID                  // an identifier: letters and digits mixed, a #number, a hash, a keyed id
	KindEmail               // an e-mail address
	KindAmount              // a sum of money ($12.50, 12.50 USD, a JSON price)
	KindDate                // a date or a timestamp
	KindURL                 // an http(s) URL
	KindPath                // a file path or a file name
	KindNumber              // a number of four digits or more (a card's last four digits, a year, an amount)
	KindCode                // an upper-case code (JFK, SKU) or a JSON value under a telling key
	KindVersion             // a version (3.19.3) or a package pinned to one (flake8==4.0.1)
	KindName                // a code name: snake_case or camelCase
	KindKey                 // a key of a JSON output (a column or field name)
)

// Fact is one thing a message stated.
type Fact struct {
	Key   string // the JSON key (or key= word) it was given under; may be empty
	Value string
	Kind  Kind
}

// String is the fact as the context shows it: key=value, or the value.
func (f Fact) String() string {
	if f.Key != "" && f.Kind != KindKey && f.Key != f.Value {
		return f.Key + "=" + f.Value
	}
	return f.Value
}

// Limits of one extraction.
const (
	// MaxPerMessage is the most facts kept of one message (the strongest
	// kinds first, then in order of appearance).
	MaxPerMessage = 48
	// maxCandidates bounds the facts looked at in one text.
	maxCandidates = 512
	// maxKeys bounds the JSON keys kept of one output.
	maxKeys = 16
	// maxValue is the longest value kept (URLs and paths: maxLongValue).
	maxValue     = 64
	maxLongValue = 160
	// maxJSON is the largest text parsed as JSON; a larger one is read
	// as prose (its keys and values are still found).
	maxJSON = 1 << 20
)

// FromMessage returns the facts of m: of its text (its content, or its
// text parts) and of the arguments of its tool calls.
func FromMessage(m sdk.Message) []Fact {
	var x extractor
	x.text(m.Text())
	for _, tc := range m.ToolCalls {
		x.text(tc.Arguments)
	}
	return x.result()
}

// Extract returns the facts of text: of its JSON when it is a JSON
// document, of its prose otherwise.
func Extract(text string) []Fact {
	var x extractor
	x.text(text)
	return x.result()
}

// extractor gathers the candidates of one message, each value once.
type extractor struct {
	facts []Fact
	seen  map[string]int // value -> index in facts
	keys  int
	kinds map[string]keyKind // what each JSON key seen names
	// viewed are the paths of the numbered listings found: their view
	// fact (path:first-last) stands for the path.
	viewed map[string]bool
}

// keyKind is what a key names (see idKey, amountKey, valueKey, secretKey).
type keyKind uint8

const (
	keyID keyKind = 1 << iota
	keyAmount
	keyValue
	keySecret
)

// keyOf classifies a JSON key once per extraction.
func (x *extractor) keyOf(key string) keyKind {
	if k, ok := x.kinds[key]; ok {
		return k
	}
	var k keyKind
	if idKey(key) {
		k |= keyID
	}
	if amountKey(key) {
		k |= keyAmount
	}
	if valueKey(key) {
		k |= keyValue
	}
	if secretKey(key) {
		k |= keySecret
	}
	if x.kinds == nil {
		x.kinds = map[string]keyKind{}
	}
	x.kinds[key] = k
	return k
}

func (x *extractor) add(f Fact) {
	if len(x.facts) >= maxCandidates || f.Value == "" || !utf8.ValidString(f.Value) {
		return
	}
	if len(f.Key) > maxValue || !utf8.ValidString(f.Key) {
		f.Key = ""
	}
	if f.Kind == KindPath && x.viewed[f.Value] {
		return
	}
	if x.seen == nil {
		x.seen = map[string]int{}
	}
	if i, ok := x.seen[f.Value]; ok {
		if g := &x.facts[i]; f.Kind < g.Kind || (g.Key == "" && f.Key != "" && f.Kind == g.Kind) {
			*g = f // the stronger reading, or the same with its key
		}
		return
	}
	if f.Kind == KindKey {
		if x.keys >= maxKeys {
			return
		}
		x.keys++
	}
	x.seen[f.Value] = len(x.facts)
	x.facts = append(x.facts, f)
}

// result is the kept facts: at most MaxPerMessage, the strongest kinds
// first when there are more, in order of appearance.
func (x *extractor) result() []Fact {
	x.dropPinned()
	if len(x.facts) <= MaxPerMessage {
		return x.facts
	}
	keep := make([]bool, len(x.facts))
	n := 0
	for k := KindView; k <= KindKey && n < MaxPerMessage; k++ {
		for i, f := range x.facts {
			if f.Kind == k && n < MaxPerMessage {
				keep[i] = true
				n++
			}
		}
	}
	out := make([]Fact, 0, n)
	for i, f := range x.facts {
		if keep[i] {
			out = append(out, f)
		}
	}
	return out
}

// dropPinned leaves out a bare version that a pin of the same message
// states (4.0.1 beside flake8==4.0.1, as pip prints both).
func (x *extractor) dropPinned() {
	pinned := map[string]bool{}
	for _, f := range x.facts {
		if f.Kind == KindVersion {
			if _, ver, ok := cutPin(f.Value); ok {
				pinned[ver] = true
			}
		}
	}
	if len(pinned) == 0 {
		return
	}
	x.facts = slices.DeleteFunc(x.facts, func(f Fact) bool { return f.Kind == KindVersion && pinned[f.Value] })
}

// text reads s as JSON when it is a JSON object or array, else as prose.
func (x *extractor) text(s string) {
	t := strings.TrimSpace(s)
	if t == "" {
		return
	}
	if (t[0] == '{' || t[0] == '[') && len(t) <= maxJSON {
		var v any
		if json.Unmarshal([]byte(t), &v) == nil {
			x.json("", v, 0)
			return
		}
	}
	x.prose(s)
}

// json walks a decoded JSON value found under key.
func (x *extractor) json(key string, v any, depth int) {
	if depth > 32 || len(x.facts) >= maxCandidates {
		return
	}
	switch v := v.(type) {
	case map[string]any:
		keys := make([]string, 0, len(v))
		for k := range v {
			keys = append(keys, k)
		}
		slices.Sort(keys) // map order must not reach the output
		for _, k := range keys {
			if k != "" && len(k) <= maxValue && x.keyOf(k)&keySecret == 0 {
				x.add(Fact{Value: k, Kind: KindKey})
			}
		}
		for _, k := range keys {
			if x.keyOf(k)&keySecret == 0 {
				x.json(k, v[k], depth+1)
			}
		}
	case []any:
		for _, e := range v {
			x.json(key, e, depth+1)
		}
	case string:
		x.scalar(key, v)
	case float64:
		x.number(key, v)
	case bool, nil:
	}
}

// scalar is a JSON string value under key.
func (x *extractor) scalar(key, v string) {
	v = strings.TrimSpace(v)
	if v == "" || len(v) > maxLongValue {
		if len(v) > maxLongValue {
			x.prose(v) // a long text: its facts, not itself
		}
		return
	}
	kk := x.keyOf(key)
	if k, ok := classify(v); ok {
		if k == KindNumber && kk&keyAmount != 0 {
			k = KindAmount
		}
		x.add(Fact{Key: key, Value: v, Kind: k})
		return
	}
	if strings.ContainsAny(v, " \t\n") {
		if kk&keyID != 0 && len(v) <= 40 && !strings.Contains(v, "\n") { // a name, a title under a telling key
			x.add(Fact{Key: key, Value: v, Kind: KindCode})
			return
		}
		x.prose(v)
		return
	}
	if len(v) <= 40 && kk&(keyID|keyValue) != 0 {
		x.add(Fact{Key: key, Value: v, Kind: KindCode})
	}
}

// number is a JSON number under key: kept when the key says it is an
// id or an amount, or when it is long.
func (x *extractor) number(key string, f float64) {
	b, err := json.Marshal(f)
	if err != nil {
		return
	}
	v := string(b)
	switch kk := x.keyOf(key); {
	case kk&keyAmount != 0:
		x.add(Fact{Key: key, Value: v, Kind: KindAmount})
	case kk&keyID != 0:
		x.add(Fact{Key: key, Value: v, Kind: KindID})
	case countDigits(v) >= 5 && !strings.ContainsAny(v, ".e"):
		x.add(Fact{Key: key, Value: v, Kind: KindNumber})
	}
}

// prose scans s word by word. A word is what lies between spaces and
// brackets, trimmed of punctuation; "key: value" and key=value pairs give
// the value its key when the key is telling.
func (x *extractor) prose(s string) {
	s = x.views(s)
	pendingKey := ""
	for len(s) > 0 && len(x.facts) < maxCandidates {
		i := strings.IndexFunc(s, isWordRune)
		if i < 0 {
			return
		}
		s = s[i:]
		j := wordEnd(s)
		raw := s[:j]
		s = s[j:]
		word := trimWord(raw)
		if word == "" {
			continue
		}
		if pin := strings.TrimRight(word, "-"); isPin(pin) { // flake8==4.0.1: a package's version ("->" of pip's "(from a==1->b==2)" trimmed)
			x.add(Fact{Value: pin, Kind: KindVersion})
			pendingKey = ""
			continue
		}
		if k, v, ok := strings.Cut(word, "="); ok && k != "" && v != "" && !strings.Contains(k, "/") { // key=value
			if k, v = trimWord(k), trimWord(v); !isKeyWord(k) {
				x.word("", word)
			} else if !secretKey(k) {
				x.word(k, v)
			}
			pendingKey = ""
			continue
		}
		if colonAfter(raw, s) && isKeyWord(word) { // "key": value, key: value
			pendingKey = word
			if secretKey(word) {
				pendingKey = "\x00" // its value is never kept
			}
			continue
		}
		key := pendingKey
		pendingKey = ""
		if key == "\x00" {
			continue
		}
		if cur, rest := currencyWord(s); cur != "" && looksNumber(word) { // 12.50 USD
			x.add(Fact{Key: keyIf(key, amountKey), Value: word + " " + cur, Kind: KindAmount})
			s = rest
			continue
		}
		x.word(key, word)
	}
}

// views adds the view facts of s's numbered listings and returns s
// without their gutters.
func (x *extractor) views(s string) string {
	if strings.IndexByte(s, '\n') < 0 {
		return s
	}
	s, ls := listings(s)
	for _, l := range ls {
		x.add(l.fact())
		if l.path != "" {
			if x.viewed == nil {
				x.viewed = map[string]bool{}
			}
			x.viewed[l.path] = true
		}
	}
	return s
}

// wordEnd is the end of the word s starts with: a space or a bracket, a
// quote or a comma (but the comma of 1,234).
func wordEnd(s string) int {
	for i, r := range s {
		switch {
		case r == ' ' || r == '\n' || r == '\t' || wordBreak.has(r) || (r >= 128 || r < ' ') && unicode.IsSpace(r):
			return i
		case r == ',' && !(i+1 < len(s) && s[i+1] >= '0' && s[i+1] <= '9' && i > 0 && s[i-1] >= '0' && s[i-1] <= '9'):
			return i
		}
	}
	return len(s)
}

// colonAfter reports a word that ends with a colon, or is followed by
// one after its closing quote.
func colonAfter(raw, rest string) bool {
	if strings.HasSuffix(raw, ":") {
		return true
	}
	rest = strings.TrimLeft(rest, `"'`)
	return strings.HasPrefix(rest, ":")
}

// word adds one word of prose found under key (empty: none).
func (x *extractor) word(key, w string) {
	k, ok := classify(w)
	if !ok && amountKey(key) && looksNumber(strings.TrimPrefix(w, "-")) {
		k, ok = KindAmount, true
	}
	if !ok {
		if key != "" && (idKey(key) || valueKey(key)) && isKeyWord(w) && len(w) >= 2 && len(w) <= 40 && !stopWord(w) {
			x.add(Fact{Key: key, Value: w, Kind: KindCode})
		}
		return
	}
	if k == KindNumber && amountKey(key) {
		k = KindAmount
	}
	if !idKey(key) && !amountKey(key) && !valueKey(key) && k != KindID {
		key = ""
	}
	x.add(Fact{Key: key, Value: w, Kind: k})
}

func keyIf(key string, ok func(string) bool) string {
	if ok(key) {
		return key
	}
	return ""
}

// classify says what kind of fact w is, if any.
func classify(w string) (Kind, bool) {
	n := len(w)
	if n < 2 || n > maxLongValue || !utf8.ValidString(w) {
		return 0, false
	}
	if k, ok, shaped := classifyShaped(w); shaped {
		return k, ok
	}
	if n > maxValue {
		return 0, false
	}
	c, ok := countChars(w)
	if !ok {
		return 0, false
	}
	return classifyByChars(w, c)
}

// classifyShaped classifies the words a fact's shape tells (a URL, an
// e-mail address, a date, an amount, a path); shaped is false for any
// other word.
func classifyShaped(w string) (k Kind, ok, shaped bool) {
	switch {
	case strings.HasPrefix(w, "http://") || strings.HasPrefix(w, "https://"):
		return KindURL, len(w) > len("https://")+2, true
	case isEmail(w):
		return KindEmail, true, true
	case isDate(w):
		return KindDate, true, true
	case isCurrency(w):
		return KindAmount, true, true
	case isPath(w):
		return KindPath, true, true
	}
	return 0, false, false
}

// charCounts are the characters of a word by class.
type charCounts struct{ letters, digits, upper, lower, other int }

// countChars counts w's characters by class; ok is false when w holds a
// character no fact is made of.
func countChars(w string) (c charCounts, ok bool) {
	for _, r := range w {
		switch {
		case r >= '0' && r <= '9':
			c.digits++
		case unicode.IsLetter(r):
			c.letters++
			if unicode.IsUpper(r) {
				c.upper++
			} else {
				c.lower++
			}
		case r == '_' || r == '-' || r == '.' || r == '#' || r == ':' || r == '+':
			c.other++
		default:
			return c, false
		}
	}
	return c, true
}

// classifyDigits classifies w, of digits and punctuation only, as an id
// (a phone number: 555-123-4567), a number of four digits or more
// (2024, 1234.50) or a version (3.19.3; an address, 10.0.0.1, reads as
// one too).
func classifyDigits(w string, c charCounts) (Kind, bool) {
	if c.other > 0 && c.digits >= 7 && !strings.Contains(w, ".") {
		return KindID, true
	}
	if c.other == 0 && c.digits >= 4 {
		return KindNumber, true
	}
	if dots := strings.Count(w, "."); dots == c.other && dots > 0 && w[0] != '.' && w[len(w)-1] != '.' && !strings.Contains(w, "..") {
		switch {
		case strings.IndexByte(w, '.') >= 4:
			return KindNumber, true
		case dots >= 2:
			return KindVersion, true
		}
	}
	return 0, false
}

// pinOps are the operators of a version pin, longest first.
var pinOps = []string{"===", "==", "~=", "!=", ">=", "<="}

// isPin reports a package pinned to a version: flake8==4.0.1,
// pre-commit~=2.4 (a name that starts with a letter, an operator, a
// version that starts with a digit).
func isPin(w string) bool {
	if len(w) > maxValue {
		return false
	}
	name, ver, ok := cutPin(w)
	return ok && ver != "" && ver[0] >= '0' && ver[0] <= '9' && unicode.IsLetter(rune(name[0])) &&
		allASCII(name, "-_.[]") && allASCII(ver, ".*+-")
}

// cutPin splits w at its first pin operator; ok is false when it has
// none after its first byte.
func cutPin(w string) (name, ver string, ok bool) {
	for _, op := range pinOps {
		if i := strings.Index(w, op); i > 0 {
			return w[:i], w[i+len(op):], true
		}
	}
	return "", "", false
}

// allASCII reports s made of ASCII letters, digits and the bytes of also.
func allASCII(s, also string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || strings.IndexByte(also, c) >= 0) {
			return false
		}
	}
	return true
}

// classifyByChars classifies w, of the characters c, as an id, a
// number, a code or a name, if any.
func classifyByChars(w string, c charCounts) (Kind, bool) {
	letters, digits, upper, other := c.letters, c.digits, c.upper, c.other
	switch {
	case w[0] == '#' && digits+letters >= 3 && digits > 0:
		return KindID, true
	case letters > 0 && digits > 0:
		if noiseMixed(w) || len(w) < 4 {
			return 0, false
		}
		return KindID, true
	case letters == 0 && digits > 0:
		return classifyDigits(w, c)
	case letters >= 3 && upper == letters && other == 0 && letters <= 8:
		if stopWord(w) {
			return 0, false
		}
		return KindCode, true
	case letters >= 4 && isCodeName(w):
		return KindName, true
	}
	return 0, false
}

// noiseMixed reports letters and digits that are not an identifier: an
// ordinal, a time, a size or a duration (3rd, 10am, 12px, 200ms, 4GB, v2).
func noiseMixed(w string) bool {
	l := strings.ToLower(strings.TrimLeft(w, "+-"))
	i := 0
	for i < len(l) && (l[i] >= '0' && l[i] <= '9' || l[i] == '.') {
		i++
	}
	if i > 0 && i < len(l) {
		switch l[i:] {
		case "st", "nd", "rd", "th", "am", "pm", "px", "pt", "em", "ms", "us", "ns", "s", "m", "h", "d", "k",
			"kb", "mb", "gb", "tb", "kib", "mib", "gib", "x", "b", "min", "hrs", "sec", "secs", "mins", "days", "%":
			return true
		}
	}
	if len(l) <= 3 && l[0] == 'v' { // v2, v10
		return true
	}
	return false
}

// isCodeName reports snake_case (a_b) or camelCase (aB) words.
func isCodeName(w string) bool {
	if strings.Trim(w, "_") != w {
		return false // _private, __dunder__: syntax more than a fact
	}
	if strings.Contains(w, "_") {
		for _, part := range strings.Split(w, "_") {
			if part == "" {
				return false
			}
		}
		return !strings.ContainsAny(w, "-.#:+")
	}
	if strings.ContainsAny(w, "-.#:+_") {
		return false
	}
	for i := 1; i < len(w); i++ {
		if w[i] >= 'A' && w[i] <= 'Z' && w[i-1] >= 'a' && w[i-1] <= 'z' {
			return true
		}
	}
	return false
}

func isEmail(w string) bool {
	at := strings.IndexByte(w, '@')
	if at <= 0 || at != strings.LastIndexByte(w, '@') {
		return false
	}
	dom := w[at+1:]
	dot := strings.LastIndexByte(dom, '.')
	if dot <= 0 || dot >= len(dom)-2 {
		return false
	}
	for _, r := range w {
		if !(unicode.IsLetter(r) || unicode.IsDigit(r) || emailChars.has(r)) {
			return false
		}
	}
	return true
}

// isDate reports 2024-05-15 (with a time after T or a space), 15/05/2024,
// 05.15.2024 and 2024/05/15.
func isDate(w string) bool {
	d := w
	if i := strings.IndexAny(d, "T"); i == 10 {
		d = d[:10]
	}
	if len(d) != 10 {
		return false
	}
	sep := d[4]
	if sep == '-' || sep == '/' {
		return d[7] == sep && digitsAt(d, 0, 4) && digitsAt(d, 5, 7) && digitsAt(d, 8, 10)
	}
	sep = d[2]
	if sep == '/' || sep == '.' || sep == '-' {
		return d[5] == sep && digitsAt(d, 0, 2) && digitsAt(d, 3, 5) && digitsAt(d, 6, 10)
	}
	return false
}

func digitsAt(s string, from, to int) bool {
	for i := from; i < to; i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

// isCurrency reports $12, $1,234.50, €9.99, -$5.
func isCurrency(w string) bool {
	w = strings.TrimPrefix(w, "-")
	if w == "" || w[0] >= '0' && w[0] <= '9' || w[0] < 128 && w[0] != '$' {
		return false
	}
	for _, sym := range []string{"$", "€", "£", "¥", "₹"} {
		if rest, ok := strings.CutPrefix(w, sym); ok {
			return looksNumber(rest)
		}
	}
	return false
}

// looksNumber reports digits with optional thousands commas and one
// decimal point.
func looksNumber(s string) bool {
	if s == "" || s[0] < '0' || s[0] > '9' {
		return false
	}
	dot := false
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c >= '0' && c <= '9':
		case c == ',' && i+3 < len(s)+0 && !dot:
		case c == '.' && !dot && i < len(s)-1:
			dot = true
		default:
			return false
		}
	}
	return s[len(s)-1] >= '0' && s[len(s)-1] <= '9'
}

// currencyWord returns the currency code that starts rest (after spaces)
// and what follows it, or "" when none does.
func currencyWord(rest string) (string, string) {
	if len(rest) < 4 || rest[0] != ' ' {
		return "", rest
	}
	t := strings.TrimLeft(rest, " ")
	if len(t) < 3 || !(t[0] >= 'A' && t[0] <= 'Z' || t[0] >= 'a' && t[0] <= 'z') {
		return "", rest
	}
	end := strings.IndexFunc(t, func(r rune) bool { return !unicode.IsLetter(r) })
	if end < 0 {
		end = len(t)
	}
	switch w := t[:end]; strings.ToUpper(w) {
	case "USD", "EUR", "GBP", "JPY", "CHF", "CAD", "AUD", "INR", "CNY", "DOLLARS", "EUROS":
		return w, t[end:]
	}
	return "", rest
}

// pathExts are the file extensions that make a bare word a file name.
var pathExts = map[string]bool{
	"py": true, "go": true, "js": true, "ts": true, "tsx": true, "jsx": true, "json": true, "md": true, "txt": true,
	"yaml": true, "yml": true, "toml": true, "c": true, "h": true, "cc": true, "cpp": true, "hpp": true, "rs": true,
	"java": true, "kt": true, "rb": true, "sh": true, "csv": true, "html": true, "css": true, "sql": true, "cfg": true,
	"ini": true, "lock": true, "xml": true, "pdf": true, "png": true, "jpg": true, "log": true, "hcl": true, "tf": true,
	"proto": true, "ipynb": true, "php": true, "swift": true, "scala": true, "mod": true, "sum": true, "env": true,
}

// isPath reports /a/b, ./a, ~/a, a/b/c and file.ext.
func isPath(w string) bool {
	for _, r := range w {
		if !(unicode.IsLetter(r) || unicode.IsDigit(r) || pathChars.has(r)) {
			return false
		}
	}
	slashes := strings.Count(w, "/")
	switch {
	case strings.HasPrefix(w, "/") || strings.HasPrefix(w, "./") || strings.HasPrefix(w, "../") || strings.HasPrefix(w, "~/"):
		return len(strings.Trim(w, "/.~")) >= 2
	case slashes >= 2 && !strings.Contains(w, "//"):
		return true
	case slashes == 1:
		a, b, _ := strings.Cut(w, "/")
		return a != "" && b != "" && (strings.Contains(b, ".") && pathExts[ext(b)] || strings.Contains(a, "_"))
	}
	dot := strings.LastIndexByte(w, '.')
	return dot > 0 && dot < len(w)-1 && pathExts[ext(w)] && isPathName(w[:dot])
}

func isPathName(s string) bool {
	for _, r := range s {
		if !(unicode.IsLetter(r) || unicode.IsDigit(r) || r == '_' || r == '-') {
			return false
		}
	}
	return s != ""
}

func ext(w string) string {
	if i := strings.LastIndexByte(w, '.'); i >= 0 {
		return strings.ToLower(w[i+1:])
	}
	return ""
}

func countDigits(s string) int {
	n := 0
	for i := 0; i < len(s); i++ {
		if s[i] >= '0' && s[i] <= '9' {
			n++
		}
	}
	return n
}

// asciiSet is a set of ASCII bytes.
type asciiSet [128]bool

func setOf(chars string) (s asciiSet) {
	for i := 0; i < len(chars); i++ {
		s[chars[i]] = true
	}
	return s
}

func (s *asciiSet) has(r rune) bool { return r < 128 && s[r] }

var (
	wordStart  = setOf("#$/.~-_+@")
	wordBreak  = setOf("()[]{}<>\"'`|;*")
	trimRight  = setOf(".:;,!?)]}>\"'`")
	trimLeft   = setOf("([{<\"'`:")
	emailChars = setOf("@._%+-")
	pathChars  = setOf("/._-~+@")
)

// isWordRune is a rune a word can start with.
func isWordRune(r rune) bool {
	if r < 128 {
		return r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || wordStart[r]
	}
	return unicode.IsLetter(r) || unicode.IsDigit(r) || strings.ContainsRune("€£¥₹", r)
}

// trimWord trims the punctuation around a word.
func trimWord(w string) string {
	for len(w) > 0 && trimRight[w[len(w)-1]&0x7f] && w[len(w)-1] < 128 {
		w = w[:len(w)-1]
	}
	for len(w) > 0 && trimLeft[w[0]&0x7f] && w[0] < 128 {
		w = w[1:]
	}
	return w
}

// isKeyWord reports a word made of letters, digits, '_' and '-'.
func isKeyWord(w string) bool {
	if w == "" {
		return false
	}
	for _, r := range w {
		if !(unicode.IsLetter(r) || unicode.IsDigit(r) || r == '_' || r == '-') {
			return false
		}
	}
	return true
}

// lowerKey is key in lower case without separators (userId, user_id,
// user-id: userid).
func lowerKey(key string) string {
	ascii := true
	for i := 0; i < len(key) && ascii; i++ {
		ascii = key[i] < 128
	}
	if !ascii {
		var b strings.Builder
		for _, r := range key {
			if r != '_' && r != '-' && r != ' ' {
				b.WriteRune(unicode.ToLower(r))
			}
		}
		return b.String()
	}
	b := make([]byte, 0, len(key))
	for i := 0; i < len(key); i++ {
		switch c := key[i]; {
		case c == '_' || c == '-' || c == ' ':
		case c >= 'A' && c <= 'Z':
			b = append(b, c+'a'-'A')
		default:
			b = append(b, c)
		}
	}
	return string(b)
}

// idKey reports a key that names an identifier or a name.
func idKey(key string) bool {
	if key == "" {
		return false
	}
	k := lowerKey(key)
	if k == "id" || k == "ids" || k == "uuid" || k == "guid" || k == "sku" || k == "ref" || k == "email" || k == "phone" || k == "name" {
		return true
	}
	for _, s := range []string{"id", "ids", "number", "num", "no", "code", "email", "phone", "name", "reference", "sku", "handle", "username", "account", "key"} {
		if strings.HasSuffix(k, s) && len(k) > len(s) {
			return !secretKey(key)
		}
	}
	return false
}

// amountKey reports a key that names a sum of money.
func amountKey(key string) bool {
	if key == "" {
		return false
	}
	k := lowerKey(key)
	for _, s := range []string{"price", "amount", "total", "balance", "cost", "fee", "refund", "paid", "payment", "charge", "salary", "budget", "subtotal"} {
		if strings.Contains(k, s) {
			return true
		}
	}
	return false
}

// valueKey reports a key whose short values are facts though they look
// like words: a status, a city, a type.
func valueKey(key string) bool {
	switch lowerKey(key) {
	case "status", "state", "type", "class", "cabin", "origin", "destination", "city", "country", "address",
		"method", "tier", "level", "membership", "plan", "role", "category", "currency", "airport", "from", "to",
		"zip", "zipcode", "postcode", "flight", "seat", "model", "brand", "color", "colour", "size":
		return true
	}
	return false
}

// secretKey reports a key whose value is never kept.
func secretKey(key string) bool {
	k := lowerKey(key)
	for _, s := range []string{"password", "passwd", "secret", "token", "apikey", "authorization", "credential", "cookie", "privatekey", "cvv", "cvc", "pin"} {
		if strings.Contains(k, s) {
			return true
		}
	}
	return false
}

// stopWords are upper-case words that are not codes.
var stopWords = map[string]bool{
	"THE": true, "AND": true, "FOR": true, "NOT": true, "YOU": true, "ARE": true, "BUT": true, "ALL": true, "ANY": true,
	"CAN": true, "HAS": true, "HAD": true, "WAS": true, "ONE": true, "OUR": true, "OUT": true, "NEW": true, "NOW": true,
	"YES": true, "TODO": true, "NOTE": true, "FIXME": true, "XXX": true, "ERROR": true, "ERRORS": true, "WARN": true,
	"WARNING": true, "INFO": true, "DEBUG": true, "TRACE": true, "FATAL": true, "FAIL": true, "FAILED": true, "PASS": true,
	"PASSED": true, "SKIP": true, "SKIPPED": true, "OK": true, "DONE": true, "TRUE": true, "FALSE": true, "NULL": true,
	"NONE": true, "JSON": true, "HTTP": true, "HTTPS": true, "API": true, "URL": true, "URI": true, "SQL": true,
	"CSV": true, "PDF": true, "HTML": true, "XML": true, "YAML": true, "UTF": true, "ASCII": true, "GET": true,
	"POST": true, "PUT": true, "PATCH": true, "DELETE": true, "HEAD": true, "UTC": true, "GMT": true, "EOF": true,
	"STDIN": true, "STDOUT": true, "STDERR": true, "README": true, "LICENSE": true, "IMPORTANT": true, "ASAP": true,
	"FAQ": true, "USD": true, "EUR": true, "GBP": true, "PLEASE": true, "THANKS": true, "NEVER": true, "ALWAYS": true,
	"MUST": true, "SHOULD": true, "DO": true, "IS": true, "IT": true, "IF": true, "OR": true, "TO": true, "OF": true,
	"IN": true, "ON": true, "AT": true, "BY": true, "AN": true, "AS": true, "BE": true, "NO": true, "SO": true,
	"UP": true, "WE": true, "MY": true, "ME": true, "ID": true, "IDS": true, "CLI": true, "GPU": true, "CPU": true,
	"RAM": true, "SDK": true, "ENV": true, "PATH": true, "HOME": true, "USER": true, "SHELL": true, "END": true,
	"BEGIN": true, "ELSE": true, "THEN": true, "WITH": true, "FROM": true, "THIS": true, "THAT": true, "WHAT": true,
	"SELECT": true, "WHERE": true, "INSERT": true, "UPDATE": true, "CREATE": true, "TABLE": true, "VALUES": true,
	"INTO": true, "JOIN": true, "ORDER": true, "GROUP": true, "LIMIT": true, "COUNT": true,
}

func stopWord(w string) bool {
	if len(w) > 8 {
		return false
	}
	var b [8]byte
	for i := 0; i < len(w); i++ {
		c := w[i]
		if c >= 'a' && c <= 'z' {
			c -= 'a' - 'A'
		}
		b[i] = c
	}
	return stopWords[string(b[:len(w)])]
}
