package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
)

// recordStream writes the run record (run -format json) as it is produced:
// the header fields first, then each turn's record the moment the turn is
// prepared, then the cache summary. Memory stays flat in the number of
// turns, and the bytes are the same as encoding the whole runRecord at once
// with two-space indentation, so the output is one JSON document.
type recordStream struct {
	w     io.Writer
	turns int
	buf   bytes.Buffer
}

// newRecordStream writes the record's header fields to w and opens its
// turns array.
func newRecordStream(w io.Writer, transcript, format, context string) (*recordStream, error) {
	s := &recordStream{w: w}
	s.buf.WriteString("{\n")
	for _, f := range []struct{ name, value string }{{"transcript", transcript}, {"format", format}, {"context", context}} {
		v, err := marshal(f.value, "  ")
		if err != nil {
			return nil, err
		}
		fmt.Fprintf(&s.buf, "  %q: %s,\n", f.name, v)
	}
	s.buf.WriteString(`  "turns": [`)
	return s, s.flush()
}

// turn writes one turn's record.
func (s *recordStream) turn(rec turnRecord) error {
	v, err := marshalTurn(rec, "    ")
	if err != nil {
		return err
	}
	if s.turns > 0 {
		s.buf.WriteByte(',')
	}
	s.buf.WriteString("\n    ")
	s.buf.Write(v)
	s.turns++
	return s.flush()
}

// close closes the turns array, writes the cache summary when there is one
// and ends the document.
func (s *recordStream) close(cache *cacheSummary) error {
	if s.turns > 0 {
		s.buf.WriteString("\n  ")
	}
	s.buf.WriteByte(']')
	if cache != nil {
		v, err := marshal(cache, "  ")
		if err != nil {
			return err
		}
		s.buf.WriteString(",\n  \"cache\": ")
		s.buf.Write(v)
	}
	s.buf.WriteString("\n}\n")
	return s.flush()
}

// flush writes what is buffered as one write.
func (s *recordStream) flush() error {
	defer s.buf.Reset()
	if _, err := s.w.Write(s.buf.Bytes()); err != nil {
		return fmt.Errorf("write record: %w", err)
	}
	return nil
}

// marshal encodes v as json.Encoder with SetIndent(prefix, "  ") would
// (HTML characters escaped), without the trailing newline.
func marshal(v any, prefix string) ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetIndent(prefix, "  ")
	if err := enc.Encode(v); err != nil {
		return nil, fmt.Errorf("encode record: %w", err)
	}
	return bytes.TrimSuffix(b.Bytes(), []byte("\n")), nil
}
