package transcript

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// Format names.
const (
	FormatJSONL  = "jsonl"  // ctxhost's own JSONL of events
	FormatTraj   = "traj"   // SWE-agent trajectory
	FormatOpenAI = "openai" // OpenAI-style message list
)

// FormatInfo describes one transcript format.
type FormatInfo struct {
	Name        string
	Extensions  []string
	Description string
}

// Formats lists the transcript formats Load understands.
func Formats() []FormatInfo {
	return []FormatInfo{
		{FormatJSONL, []string{".jsonl"}, "ctxhost events, one JSON object per line"},
		{FormatTraj, []string{".traj"}, "SWE-agent trajectory (history messages, OpenAI-style tool calls)"},
		{FormatOpenAI, []string{".json"}, `OpenAI-style messages: a JSON array or {"messages": [...]}`},
	}
}

// Load reads the transcript at path. format is one of the Formats names,
// or "" to detect it from the extension and, failing that, the content.
// The whole file is parsed and checked before Load returns.
func Load(path, format string) (*Transcript, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("load transcript: %w", err)
	}
	return Parse(path, data, format)
}

// Parse is Load for data already in memory; name is used in errors.
func Parse(name string, data []byte, format string) (*Transcript, error) {
	if format == "" {
		format = detect(name, data)
	}
	var events []Event
	var err error
	switch format {
	case FormatJSONL:
		events, err = parseJSONL(name, data)
	case FormatTraj:
		events, err = parseTraj(name, data)
	case FormatOpenAI:
		events, err = parseOpenAI(name, data)
	default:
		return nil, fmt.Errorf("unknown transcript format %q (want %s)", format, strings.Join(formatNames(), ", "))
	}
	if err != nil {
		return nil, err
	}
	return &Transcript{Format: format, Events: events}, nil
}

func formatNames() []string {
	var names []string
	for _, f := range Formats() {
		names = append(names, f.Name)
	}
	return names
}

// detect picks a format by extension, then by content: a JSON array is an
// OpenAI message list; a single JSON object with "history" is a
// trajectory, with "messages" a message list; anything else is JSONL.
func detect(name string, data []byte) string {
	ext := strings.ToLower(filepath.Ext(name))
	for _, f := range Formats() {
		for _, e := range f.Extensions {
			if e == ext {
				return f.Name
			}
		}
	}
	trimmed := bytes.TrimSpace(data)
	if len(trimmed) > 0 && trimmed[0] == '[' {
		return FormatOpenAI
	}
	var probe map[string]json.RawMessage
	if json.Unmarshal(trimmed, &probe) == nil {
		if _, ok := probe["history"]; ok {
			return FormatTraj
		}
		if _, ok := probe["messages"]; ok {
			return FormatOpenAI
		}
	}
	return FormatJSONL
}
