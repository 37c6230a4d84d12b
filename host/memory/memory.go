// Package memory is the plain model of memory blocks: named, size-limited
// texts that the sessions of a scope share and that every prepare of
// those sessions pins in the system text. It validates blocks, checks
// their limits, applies the agent's edits (append, replace) and renders
// the blocks a session sees; keeping them is the engine's business.
package memory

import (
	"errors"
	"fmt"
	"regexp"
	"strings"
	"unicode/utf8"
)

// Scope kinds: a block belongs to one session, to every session of an
// agent, or to every session of a group.
const (
	KindSession = "session"
	KindAgent   = "agent"
	KindGroup   = "group"
)

// Scope is where a block lives: KIND:NAME, e.g. "agent:coder".
type Scope struct {
	Kind string
	Name string
}

// String is the scope as ParseScope reads it.
func (s Scope) String() string { return s.Kind + ":" + s.Name }

// rank orders scopes from the most specific: a session's block shadows an
// agent's of the same label, which shadows a group's.
func (s Scope) rank() int {
	switch s.Kind {
	case KindSession:
		return 0
	case KindAgent:
		return 1
	}
	return 2
}

var namePattern = regexp.MustCompile(`^[A-Za-z0-9._:-]{1,128}$`)

// ParseScope reads KIND:NAME, KIND one of session, agent, group and NAME
// 1..128 bytes of [A-Za-z0-9._:-].
func ParseScope(s string) (Scope, error) {
	kind, name, ok := strings.Cut(s, ":")
	if !ok {
		return Scope{}, fmt.Errorf("scope %q: want session:ID, agent:NAME or group:NAME", s)
	}
	sc := Scope{Kind: kind, Name: name}
	return sc, sc.Validate()
}

// Validate checks the scope's kind and name.
func (s Scope) Validate() error {
	switch s.Kind {
	case KindSession, KindAgent, KindGroup:
	default:
		return fmt.Errorf("scope %q: unknown kind %q (want session, agent or group)", s, s.Kind)
	}
	if !namePattern.MatchString(s.Name) {
		return fmt.Errorf("scope %q: the name must be 1..128 bytes of [A-Za-z0-9._:-]", s)
	}
	return nil
}

// Units a limit counts in.
const (
	Tokens = "tokens"
	Chars  = "chars"
)

// DefaultLimit is a block's limit when none is given: 5,000 characters
// (Letta's default).
const (
	DefaultLimit = 5000
	DefaultUnit  = Chars
)

// MaxLimit bounds any limit: 1,000,000 (characters or tokens).
const MaxLimit = 1_000_000

// Block is one memory block.
type Block struct {
	Scope Scope
	// Label names the block within its scope: 1..64 bytes of
	// [A-Za-z0-9_.-], starting with a letter.
	Label string
	// Description tells the model what the block is for.
	Description string
	Value       string
	// Limit is the most Value may hold, in Unit (tokens or chars).
	Limit int
	Unit  string
	// ReadOnly blocks are changed by operators (the service API, the
	// CLI), never by the model's memory tools.
	ReadOnly bool
	// Version is the stored version (0: not stored; from HCL defaults).
	Version uint64
}

var labelPattern = regexp.MustCompile(`^[A-Za-z][A-Za-z0-9_.-]{0,63}$`)

// ErrOverLimit is wrapped by the error of a write that would take a
// block over its limit.
var ErrOverLimit = errors.New("memory block over its limit")

// ErrReadOnly is wrapped by the error of a model's edit of a read-only
// block.
var ErrReadOnly = errors.New("memory block is read-only")

// Normalize fills a block's default limit and unit.
func (b Block) Normalize() Block {
	if b.Unit == "" {
		b.Unit = DefaultUnit
	}
	if b.Limit == 0 {
		b.Limit = DefaultLimit
	}
	return b
}

// Validate checks the block's scope, label, limit and texts (valid UTF-8,
// no NUL).
func (b Block) Validate() error {
	if err := b.Scope.Validate(); err != nil {
		return err
	}
	if !labelPattern.MatchString(b.Label) {
		return fmt.Errorf("block label %q: want 1..64 bytes of [A-Za-z0-9_.-] starting with a letter", b.Label)
	}
	if b.Unit != Tokens && b.Unit != Chars {
		return fmt.Errorf("block %q: limit unit %q (want tokens or chars)", b.Label, b.Unit)
	}
	if b.Limit < 1 || b.Limit > MaxLimit {
		return fmt.Errorf("block %q: limit %d out of range 1..%d", b.Label, b.Limit, MaxLimit)
	}
	for what, s := range map[string]string{"value": b.Value, "description": b.Description} {
		if !utf8.ValidString(s) || strings.ContainsRune(s, 0) {
			return fmt.Errorf("block %q: the %s must be UTF-8 text without NUL", b.Label, what)
		}
	}
	return nil
}

// Size is the block value's size in its limit's unit: characters, or
// tokens by count.
func (b Block) Size(count func(string) int) int {
	if b.Unit == Tokens {
		return count(b.Value)
	}
	return utf8.RuneCountInString(b.Value)
}

// CheckLimit refuses a value over the block's limit, naming the limit.
func (b Block) CheckLimit(count func(string) int) error {
	if n := b.Size(count); n > b.Limit {
		return fmt.Errorf("block %q (%s): %d %s exceeds its limit of %d %s: %w", b.Label, b.Scope, n, b.Unit, b.Limit, b.Unit, ErrOverLimit)
	}
	return nil
}

// Append returns b with text appended to its value on a new line (no
// newline when the value is empty).
func (b Block) Append(text string) Block {
	if b.Value == "" {
		b.Value = text
	} else {
		b.Value += "\n" + text
	}
	return b
}

// Replace returns b with the one occurrence of old in its value replaced
// by new; old must occur exactly once (an empty new deletes it).
func (b Block) Replace(old, new string) (Block, error) {
	if old == "" {
		return b, fmt.Errorf("block %q: the text to replace is empty", b.Label)
	}
	switch n := strings.Count(b.Value, old); n {
	case 0:
		return b, fmt.Errorf("block %q: %q does not occur in its value", b.Label, old)
	case 1:
	default:
		return b, fmt.Errorf("block %q: %q occurs %d times in its value; give text that occurs once", b.Label, old, n)
	}
	b.Value = strings.Replace(b.Value, old, new, 1)
	return b, nil
}
