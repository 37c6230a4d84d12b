package transcript

import (
	"bufio"
	"bytes"
	"fmt"
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
// The whole file is parsed and checked before Load returns; Open reads it
// one event at a time instead.
func Load(path, format string) (*Transcript, error) {
	r, err := Open(path, format)
	if err != nil {
		return nil, fmt.Errorf("load transcript: %w", err)
	}
	defer r.Close()
	events, err := readAll(r)
	if err != nil {
		return nil, err
	}
	return &Transcript{Format: r.Format(), Events: events}, nil
}

// Parse is Load for data already in memory; name is used in errors.
func Parse(name string, data []byte, format string) (*Transcript, error) {
	if format == "" {
		format = detectStream(name, bufio.NewReader(bytes.NewReader(data)))
	}
	r, err := NewReader(name, bytes.NewReader(data), format)
	if err != nil {
		return nil, err
	}
	events, err := readAll(r)
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
