package transcript

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"runtime"
	"strings"
	"testing"
)

// TestReaderHoldsOneEvent reads a long transcript in each format from a
// generated stream (never held whole) and checks the heap stays as small
// at the end as after the first events: a Reader holds one event at a
// time, whatever the transcript's length.
func TestReaderHoldsOneEvent(t *testing.T) {
	if testing.Short() {
		t.Skip("slow: make test runs it, make test-short (-short) leaves it out")
	}
	for _, format := range []string{FormatJSONL, FormatOpenAI, FormatTraj} {
		t.Run(format, func(t *testing.T) {
			const n = 20_000
			r, err := NewReader("long."+format, &generated{format: format, n: n}, format)
			if err != nil {
				t.Fatal(err)
			}
			var early, late uint64
			count := 0
			for {
				_, err := r.Next()
				if errors.Is(err, io.EOF) {
					break
				}
				if err != nil {
					t.Fatal(err)
				}
				count++
				switch count {
				case 1_000:
					early = heapInUse()
				case 2 * n * 9 / 10:
					late = heapInUse()
				}
			}
			// Per assistant message: a prepare and two messages.
			if count != 3*n+1 {
				t.Fatalf("read %d events, want %d", count, 3*n+1)
			}
			// The tool calls seen are kept to check tool results (a few
			// dozen bytes each); the events are not (hundreds each).
			if late > early+4<<20 {
				t.Errorf("heap in use %d KiB after 1,000 events, %d KiB after %d: the reader keeps what it read", early>>10, late>>10, 2*n*9/10)
			}
		})
	}
}

func heapInUse() uint64 {
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return ms.HeapInuse
}

// generated streams a transcript of n assistant and tool message pairs
// in format, producing it as it is read.
type generated struct {
	format string
	n, i   int
	buf    bytes.Buffer
	done   bool
}

func (g *generated) Read(p []byte) (int, error) {
	for g.buf.Len() < len(p) && !g.done {
		g.fill()
	}
	if g.buf.Len() == 0 {
		return 0, io.EOF
	}
	return g.buf.Read(p)
}

func (g *generated) fill() {
	body := strings.Repeat("the parser drops the last token of a line ", 8)
	if g.i == 0 {
		switch g.format {
		case FormatTraj:
			g.buf.WriteString(`{"environment":"x","history":[` + "\n" + `{"role":"user","content":"fix it"}`)
		case FormatOpenAI:
			g.buf.WriteString("[\n" + `{"role":"user","content":"fix it"}`)
		default:
			g.buf.WriteString(`{"type":"message","role":"user","content":"fix it"}` + "\n")
		}
	}
	if g.i == g.n {
		switch g.format {
		case FormatTraj:
			g.buf.WriteString("\n],\"info\":{\"exit_status\":\"submitted\"}}\n")
		case FormatOpenAI:
			g.buf.WriteString("\n]\n")
		}
		g.done = true
		return
	}
	g.i++
	args := fmt.Sprintf(`{\"command\":\"grep -n token f%d.go\"}`, g.i)
	if g.format == FormatJSONL {
		fmt.Fprintf(&g.buf, `{"type":"prepare"}`+"\n"+`{"type":"message","role":"assistant","content":"step %d","tool_calls":[{"id":"c%d","name":"bash","arguments":"%s"}]}`+"\n", g.i, g.i, args)
		fmt.Fprintf(&g.buf, `{"type":"message","role":"tool","tool_call_id":"c%d","content":"%s"}`+"\n", g.i, body)
		return
	}
	fmt.Fprintf(&g.buf, `,{"role":"assistant","content":"step %d","tool_calls":[{"id":"c%d","type":"function","function":{"name":"bash","arguments":"%s"}}]}`+"\n", g.i, g.i, args)
	fmt.Fprintf(&g.buf, `,{"role":"tool","tool_call_id":"c%d","content":"%s"}`+"\n", g.i, body)
}
