package codeindex

import (
	"strings"
)

// Chunk sizes, in lines.
const (
	maxChunkLines  = 200 // a longer definition is cut into pieces
	gapChunkLines  = 80  // top-level code between definitions, per chunk
	textChunkLines = 60  // files without a grammar, per chunk
)

// Chunk is one searchable piece of a file: a function or method, the
// header of a class or type (up to its first member), top-level code
// between definitions, or a window of a file without a grammar.
type Chunk struct {
	Path    string
	Line    int // first line, 1-based
	EndLine int // last line, inclusive
	Symbol  string
	Kind    string // a symbol kind, "code" for top-level code, "text" for a window
	Text    string
}

// ID names a chunk uniquely within its repository.
func (c Chunk) ID() string {
	return c.Path + "#" + itoa(c.Line) + "-" + itoa(c.EndLine)
}

// Chunks cuts f's content src into chunks along its definitions.
func Chunks(f *File, src []byte) []Chunk {
	lines := strings.SplitAfter(string(src), "\n")
	if n := len(lines); n > 0 && lines[n-1] == "" {
		lines = lines[:n-1]
	}
	if f.Tags == nil {
		return windows(f.Path, lines, 1, len(lines), textChunkLines, "text")
	}
	defs := f.Tags.Definitions
	var out []Chunk
	covered := make([]bool, len(lines)+2)
	insideFunction := make([]bool, len(defs))
	for i, d := range defs {
		if d.Depth == 0 {
			for l := d.Line; l <= d.EndLine && l < len(covered); l++ {
				covered[l] = true
			}
		}
		// a definition nested in a function is part of the function's chunk
		for j := i - 1; j >= 0; j-- {
			p := defs[j]
			if p.Line <= d.Line && d.EndLine <= p.EndLine && p.Depth < d.Depth {
				insideFunction[i] = insideFunction[j] || p.Kind == KindFunction || p.Kind == KindMethod
				break
			}
		}
	}
	for i, d := range defs {
		if insideFunction[i] {
			continue
		}
		end := d.EndLine
		if d.Kind != KindFunction && d.Kind != KindMethod {
			// a container's header: up to its first nested definition
			for j := i + 1; j < len(defs) && defs[j].Line <= d.EndLine; j++ {
				if defs[j].Depth > d.Depth {
					end = defs[j].Line - 1
					break
				}
			}
		}
		if end < d.Line {
			end = d.Line
		}
		end = min(end, len(lines))
		if d.Line > len(lines) {
			continue
		}
		// a long definition is cut into pieces of maxChunkLines, each
		// under the definition's name
		for s := d.Line; s <= end; s += maxChunkLines {
			e := min(s+maxChunkLines-1, end)
			out = append(out, Chunk{Path: f.Path, Line: s, EndLine: e, Symbol: d.Name, Kind: d.Kind, Text: join(lines, s, e)})
		}
	}
	// top-level code outside every definition
	start := 0
	for l := 1; l <= len(lines)+1; l++ {
		if l <= len(lines) && !covered[l] {
			if start == 0 {
				start = l
			}
			continue
		}
		if start != 0 {
			out = append(out, windows(f.Path, lines, start, l-1, gapChunkLines, "code")...)
			start = 0
		}
	}
	return out
}

// windows cuts lines[from..to] (1-based, inclusive) into chunks of at most
// size lines, leaving out blank ones.
func windows(path string, lines []string, from, to, size int, kind string) []Chunk {
	var out []Chunk
	for s := from; s <= to; s += size {
		e := min(s+size-1, to)
		text := join(lines, s, e)
		if strings.TrimSpace(text) == "" {
			continue
		}
		out = append(out, Chunk{Path: path, Line: s, EndLine: e, Kind: kind, Text: text})
	}
	return out
}

func join(lines []string, from, to int) string {
	return strings.Join(lines[from-1:to], "")
}

func itoa(n int) string {
	if n == 0 {
		return "0"
	}
	var b [20]byte
	i := len(b)
	neg := n < 0
	if neg {
		n = -n
	}
	for n > 0 {
		i--
		b[i] = byte('0' + n%10)
		n /= 10
	}
	if neg {
		i--
		b[i] = '-'
	}
	return string(b[i:])
}
