package main

import (
	"bufio"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/ctxhost/ctxhost/internal/replay"
)

// conversation is one conversation of a corpus, in its split.
type conversation struct {
	id    string // its source id
	shape string
	split string
	conv  *replay.Conversation
}

// splitOf is the split of a source id: tune when the first byte of its
// sha256 is even, heldout when odd. It reads nothing but the id.
func splitOf(id string) string {
	if sum := sha256.Sum256([]byte(id)); sum[0]%2 == 0 {
		return "tune"
	}
	return "heldout"
}

// corpusLine is one line of a corpus file.
type corpusLine struct {
	ID       string           `json:"id"`
	Messages []replay.Message `json:"messages"`
}

// loadCorpus reads every .jsonl file of dir, a corpus of the shape named
// by dir's base name. Conversations without an assistant turn to replay
// are left out.
func loadCorpus(dir string) ([]conversation, error) {
	shape := filepath.Base(filepath.Clean(dir))
	files, err := filepath.Glob(filepath.Join(dir, "*.jsonl"))
	if err != nil {
		return nil, err
	}
	if len(files) == 0 {
		return nil, fmt.Errorf("corpus %s: no .jsonl file", dir)
	}
	sort.Strings(files)
	var out []conversation
	seen := map[string]bool{}
	for _, f := range files {
		fh, err := os.Open(f)
		if err != nil {
			return nil, err
		}
		sc := bufio.NewScanner(fh)
		sc.Buffer(make([]byte, 1<<20), 64<<20)
		for n := 1; sc.Scan(); n++ {
			if strings.TrimSpace(sc.Text()) == "" {
				continue
			}
			var l corpusLine
			if err := json.Unmarshal(sc.Bytes(), &l); err != nil {
				fh.Close()
				return nil, fmt.Errorf("%s:%d: %w", f, n, err)
			}
			if l.ID == "" || seen[l.ID] {
				fh.Close()
				return nil, fmt.Errorf("%s:%d: no id, or one seen before (%q)", f, n, l.ID)
			}
			seen[l.ID] = true
			c, err := convOf(shape, l.ID, l.Messages, false)
			if err != nil {
				fh.Close()
				return nil, fmt.Errorf("%s:%d: %w", f, n, err)
			}
			if c != nil {
				out = append(out, *c)
			}
		}
		err = sc.Err()
		fh.Close()
		if err != nil {
			return nil, fmt.Errorf("%s: %w", f, err)
		}
	}
	return out, nil
}

// convOf is the conversation of msgs, nil when it has no assistant turn
// after its first user message.
func convOf(shape, id string, msgs []replay.Message, unlabelled bool) (*conversation, error) {
	split := splitOf(id)
	name := fmt.Sprintf("%s-%x", shape, sha256.Sum256([]byte(id)))[:len(shape)+1+12]
	c, err := replay.FromMessages(name, msgs, unlabelled)
	if errors.Is(err, replay.ErrNoTask) {
		return nil, nil // nothing an agent would send
	}
	if err != nil {
		return nil, err
	}
	for _, t := range c.Turns[c.TaskAt:] {
		if t.Role == "assistant" {
			return &conversation{id: id, shape: shape, split: split, conv: c}, nil
		}
	}
	return nil, nil
}

// loadTrajectories reads SWE-agent runs in two shapes: swe-agent (as
// recorded, when the run made tool calls) and swe-agent-unlabelled.
func loadTrajectories(paths []string) ([]conversation, error) {
	var out []conversation
	for _, p := range paths {
		id := "trajectories/" + filepath.Base(p)
		for _, form := range []string{"recorded", "unlabelled"} {
			c, err := replay.LoadTrajectory(p, form)
			if err != nil {
				return nil, err
			}
			if c == nil {
				continue
			}
			shape := "swe-agent"
			if form == "unlabelled" {
				shape = "swe-agent-unlabelled"
			}
			c.Name = replay.TaskID(shape + "-" + strings.TrimSuffix(filepath.Base(p), ".traj"))
			out = append(out, conversation{id: id, shape: shape, split: splitOf(id), conv: c})
		}
	}
	return out, nil
}
