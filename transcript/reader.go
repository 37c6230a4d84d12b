package transcript

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
)

// Reader reads a transcript one event at a time, holding only the event
// it returns (and the tool calls seen so far, to check tool results), so
// a transcript of any length is read in constant memory: ctxhost JSONL a
// line at a time, the JSON formats through a streaming decoder, one
// message of the list at a time. Events come in the order and with the
// checks of Load; a malformed event is an error when Next reaches it, so
// a caller that must not act on a malformed transcript reads it through
// once first (Check).
type Reader struct {
	format string
	next   func() (Event, error)
	close  func() error
	err    error // sticky: the error Next returned, or io.EOF
}

// Open opens the transcript at path for reading with Next. format is one
// of the Formats names, or "" to detect it from the extension and,
// failing that, from the content (what Load does, reading no more than
// the first JSON value's keys). Close the Reader when done.
func Open(path, format string) (*Reader, error) {
	if format == "" {
		f, err := os.Open(path)
		if err != nil {
			return nil, fmt.Errorf("open transcript: %w", err)
		}
		format = detectStream(path, bufio.NewReader(f))
		f.Close()
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("open transcript: %w", err)
	}
	r, err := NewReader(path, f, format)
	if err != nil {
		f.Close()
		return nil, err
	}
	r.close = f.Close
	return r, nil
}

// NewReader reads a transcript of the given format (one of the Formats
// names; "" is ctxhost JSONL unless name's extension says otherwise) from
// in; name is used in errors. Closing the Reader does not close in.
func NewReader(name string, in io.Reader, format string) (*Reader, error) {
	if format == "" {
		format = byExtension(name)
		if format == "" {
			format = FormatJSONL
		}
	}
	r := &Reader{format: format, close: func() error { return nil }}
	switch format {
	case FormatJSONL:
		r.next = newJSONLSource(name, in).next
	case FormatTraj:
		r.next = newChatSource(name, in, "history", trajKind).next
	case FormatOpenAI:
		r.next = newChatSource(name, in, "messages", openAIKind).next
	default:
		return nil, fmt.Errorf("unknown transcript format %q (want %s)", format, strings.Join(formatNames(), ", "))
	}
	return r, nil
}

// Format is the transcript's format (one of the Formats names).
func (r *Reader) Format() string { return r.format }

// Next returns the next event, or io.EOF after the last one. After an
// error, Next returns the same error again.
func (r *Reader) Next() (Event, error) {
	if r.err != nil {
		return Event{}, r.err
	}
	ev, err := r.next()
	if err != nil {
		r.err = err
	}
	return ev, err
}

// Close releases the file Open opened.
func (r *Reader) Close() error { return r.close() }

// Summary is what Check learns of a transcript.
type Summary struct {
	Format string
	Events int
	counts map[string]int
}

// Count returns the number of events of type typ.
func (s Summary) Count(typ string) int { return s.counts[typ] }

// Check reads the transcript at path through once, checking every event
// as Load does, and returns its format and event counts; it holds one
// event at a time.
func Check(path, format string) (Summary, error) {
	r, err := Open(path, format)
	if err != nil {
		return Summary{}, err
	}
	defer r.Close()
	s := Summary{Format: r.Format(), counts: map[string]int{}}
	for {
		ev, err := r.Next()
		if errors.Is(err, io.EOF) {
			return s, nil
		}
		if err != nil {
			return Summary{}, err
		}
		s.Events++
		s.counts[ev.Type]++
	}
}

// readAll collects a Reader's events.
func readAll(r *Reader) ([]Event, error) {
	var events []Event
	for {
		ev, err := r.Next()
		if errors.Is(err, io.EOF) {
			return events, nil
		}
		if err != nil {
			return nil, err
		}
		events = append(events, ev)
	}
}

// byExtension is the format name's extension says, or "".
func byExtension(name string) string {
	ext := strings.ToLower(filepath.Ext(name))
	for _, f := range Formats() {
		for _, e := range f.Extensions {
			if e == ext {
				return f.Name
			}
		}
	}
	return ""
}

// detectStream is detect reading from in: by extension, then a JSON
// array is an OpenAI message list, a first JSON object with the key
// "history" a trajectory and with "messages" a message list (its keys
// are read, their values skipped), anything else JSONL.
func detectStream(name string, in *bufio.Reader) string {
	if f := byExtension(name); f != "" {
		return f
	}
	for {
		b, err := in.Peek(1)
		if err != nil {
			return FormatJSONL
		}
		if bytes.IndexByte([]byte(" \t\r\n"), b[0]) < 0 {
			if b[0] == '[' {
				return FormatOpenAI
			}
			break
		}
		in.ReadByte()
	}
	dec := json.NewDecoder(in)
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return FormatJSONL
	}
	for dec.More() {
		key, err := dec.Token()
		if err != nil {
			return FormatJSONL
		}
		switch key {
		case "history":
			return FormatTraj
		case "messages":
			return FormatOpenAI
		}
		if skipValue(dec) != nil {
			return FormatJSONL
		}
	}
	return FormatJSONL
}

// skipValue reads past the next JSON value token by token, holding no
// more of it than one token.
func skipValue(dec *json.Decoder) error {
	depth := 0
	for {
		tok, err := dec.Token()
		if err != nil {
			return err
		}
		switch tok {
		case json.Delim('{'), json.Delim('['):
			depth++
		case json.Delim('}'), json.Delim(']'):
			depth--
		}
		if depth == 0 {
			return nil
		}
	}
}

// jsonlSource reads ctxhost JSONL a line at a time.
type jsonlSource struct {
	name  string
	in    *bufio.Reader
	line  int
	calls *callTracker
}

func newJSONLSource(name string, in io.Reader) *jsonlSource {
	return &jsonlSource{name: name, in: bufio.NewReaderSize(in, 64<<10), calls: newCallTracker()}
}

func (s *jsonlSource) next() (Event, error) {
	for {
		raw, err := s.in.ReadBytes('\n')
		if len(raw) == 0 && err != nil {
			if errors.Is(err, io.EOF) {
				return Event{}, io.EOF
			}
			return Event{}, fmt.Errorf("read %s: %w", s.name, err)
		}
		if err != nil && !errors.Is(err, io.EOF) {
			return Event{}, fmt.Errorf("read %s: %w", s.name, err)
		}
		s.line++
		line := bytes.TrimSpace(raw)
		if len(line) == 0 || line[0] == '#' || bytes.HasPrefix(line, []byte("//")) {
			continue
		}
		ev, err := parseJSONLEvent(line)
		if err == nil && ev.Message != nil {
			err = s.calls.message(ev.Message)
		}
		if err != nil {
			return Event{}, lineError(s.name, s.line, "%v", err)
		}
		ev.Line = s.line
		return ev, nil
	}
}

// lineCounter passes a stream through, knowing the line of any offset
// not before the last one asked about (offsets only move forward while a
// decoder reads): it keeps the starts of the lines read ahead only.
type lineCounter struct {
	in     io.Reader
	off    int64   // bytes passed through
	starts []int64 // offsets of line starts read and not yet passed
	before int     // lines that started before starts[0]
}

func (c *lineCounter) Read(p []byte) (int, error) {
	n, err := c.in.Read(p)
	for i, b := range p[:n] {
		if b == '\n' {
			c.starts = append(c.starts, c.off+int64(i)+1)
		}
	}
	c.off += int64(n)
	return n, err
}

// line returns the 1-based line of offset.
func (c *lineCounter) line(offset int64) int {
	i := 0
	for i < len(c.starts) && c.starts[i] <= offset {
		i++
	}
	c.before += i
	c.starts = c.starts[i:]
	return c.before + 1
}

// chatSource reads an OpenAI-style list or a SWE-agent history through a
// streaming decoder, one message at a time, with chatState.
type chatSource struct {
	name    string
	key     string // the list's key in the top-level object; "" or the array itself
	counter *lineCounter
	dec     *json.Decoder
	state   *chatState
	started bool
	object  bool // the list is a value of the top-level object
	done    bool
	queue   []Event
}

func newChatSource(name string, in io.Reader, key string, kindOf kindFunc) *chatSource {
	c := &lineCounter{in: in}
	return &chatSource{name: name, key: key, counter: c, dec: json.NewDecoder(bufio.NewReaderSize(c, 64<<10)),
		state: newChatState(name, kindOf)}
}

func (s *chatSource) next() (Event, error) {
	for len(s.queue) == 0 {
		if s.done {
			return Event{}, io.EOF
		}
		if err := s.step(); err != nil {
			return Event{}, s.wrap(err)
		}
	}
	ev := s.queue[0]
	s.queue = s.queue[1:]
	return ev, nil
}

// step reads the next message of the list into the queue, or finishes.
func (s *chatSource) step() error {
	if !s.started {
		s.started = true
		if err := s.findList(); err != nil {
			return err
		}
	}
	if s.dec.More() {
		start := s.dec.InputOffset()
		var raw json.RawMessage
		if err := s.dec.Decode(&raw); err != nil {
			var se *json.SyntaxError
			if errors.As(err, &se) {
				se.Offset += start // Decode counts from the value's start
			}
			return err
		}
		// The element starts where its bytes end minus its length.
		evs, err := s.state.feed(element{raw: raw, line: s.counter.line(s.dec.InputOffset() - int64(len(raw)))})
		s.queue = evs
		return err
	}
	if _, err := s.dec.Token(); err != nil { // the list's ']'
		return err
	}
	if err := s.finishDocument(); err != nil {
		return err
	}
	s.done = true
	s.queue = s.state.finish()
	return nil
}

// findList reads up to the list's first element.
func (s *chatSource) findList() error {
	what := "messages"
	if s.key != "" {
		what = s.key
		first, err := s.dec.Token()
		if err != nil {
			return err
		}
		if first == json.Delim('[') && s.key == "messages" {
			return nil // an OpenAI list given as a bare array
		}
		if first != json.Delim('{') {
			return shapeErrorf("expected a JSON object with %q", s.key)
		}
		s.object = true
		for {
			if !s.dec.More() {
				return shapeErrorf("no %q list", s.key)
			}
			tok, err := s.dec.Token()
			if err != nil {
				return err
			}
			if tok == s.key {
				break
			}
			if err := skipValue(s.dec); err != nil {
				return err
			}
		}
	}
	if tok, err := s.dec.Token(); err != nil || tok != json.Delim('[') {
		if err != nil {
			return err
		}
		return shapeErrorf("%q must be a list", what)
	}
	return nil
}

// finishDocument reads the rest of the document after the list (the
// object's other keys), and checks nothing follows it.
func (s *chatSource) finishDocument() error {
	if s.object {
		for s.dec.More() {
			if _, err := s.dec.Token(); err != nil { // a key
				return err
			}
			if err := skipValue(s.dec); err != nil {
				return err
			}
		}
		if _, err := s.dec.Token(); err != nil { // the object's '}'
			return err
		}
	}
	if _, err := s.dec.Token(); !errors.Is(err, io.EOF) {
		if err == nil {
			return errors.New("invalid JSON: data after the top-level value")
		}
		return err
	}
	return nil
}

// wrap words a decoding error with the file and, for a syntax error, its
// line; errors already located pass as they are.
func (s *chatSource) wrap(err error) error {
	var located *locatedError
	if errors.As(err, &located) {
		return err
	}
	var shape *shapeError
	if errors.As(err, &shape) {
		return fmt.Errorf("%s: %w", s.name, err)
	}
	var se *json.SyntaxError
	if errors.As(err, &se) {
		return lineError(s.name, s.counter.line(se.Offset), "%v", jsonError(err))
	}
	if errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF) {
		err = errors.New("unexpected end of JSON input")
	}
	return fmt.Errorf("%s: %w", s.name, jsonError(err))
}

// shapeError is a document of valid JSON but not of the format's shape.
type shapeError struct{ msg string }

func (e *shapeError) Error() string { return e.msg }

func shapeErrorf(format string, a ...any) error { return &shapeError{fmt.Sprintf(format, a...)} }
