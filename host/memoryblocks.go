package host

import (
	"context"
	"fmt"

	"github.com/ctxhost/ctxhost/host/memory"
	"github.com/ctxhost/ctxhost/sdk"
)

// ComponentMemory is the component of the memory blocks a session sees:
// in the system slot after the system prompt and instructions, priority
// 0 (never compacted).
const ComponentMemory = "memory_blocks"

// MemorySource gives a session the memory blocks it sees at each turn
// (the engine's, over its block store). It is called once per prepare,
// with the session locked, and must not call back into the session.
type MemorySource interface {
	// Blocks returns the blocks the session sees on a turn of agent
	// ("" for the session's own turn).
	Blocks(ctx context.Context, agent string) ([]memory.Block, error)
}

// SetMemory makes src the session's memory (nil: none). It is wiring,
// like the recorder: not saved, and set again when the session is
// opened.
func (s *Session) SetMemory(src MemorySource) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.memory = src
}

// memoryComponent returns the turn's memory component, ok false when the
// session sees no blocks. The rendering is counted once per text.
func (t *turn) memoryComponent(ctx context.Context) (countedComponent, bool, error) {
	s := t.s
	if s.memory == nil {
		return countedComponent{}, false, nil
	}
	blocks, err := s.memory.Blocks(ctx, t.agent.Name)
	if err != nil {
		return countedComponent{}, false, fmt.Errorf("memory blocks: %w", err)
	}
	text := memory.Render(blocks, s.counter.Count)
	t.memoryText = text
	if text == "" {
		return countedComponent{}, false, nil
	}
	if s.memoryCount.text != text {
		s.memoryCount = countedText{text: text, tokens: s.counter.Count(text)}
	}
	return countedComponent{comp: sdk.Component{Name: ComponentMemory, Slot: sdk.SlotSystem, Text: text}, tokens: s.memoryCount.tokens}, true, nil
}
