package engine

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"

	"github.com/ctxhost/ctxhost/config"
	"github.com/ctxhost/ctxhost/host"
	"github.com/ctxhost/ctxhost/host/memory"
	"github.com/ctxhost/ctxhost/record"
	"github.com/ctxhost/ctxhost/tokenizer"
)

// MemoryBlock is one memory block: a named, size-limited text shared by
// the sessions of its scope and pinned in every prepare of theirs.
type MemoryBlock = memory.Block

// MemoryScope is where a block lives: a session, an agent or a group.
type MemoryScope = memory.Scope

// ErrBlockNotFound is wrapped by the error of a call on a memory block
// the store does not hold.
var ErrBlockNotFound = record.ErrBlockNotFound

// ErrBlockOverLimit is wrapped by the error of a write that would take a
// block over its limit (the message names the limit).
var ErrBlockOverLimit = memory.ErrOverLimit

// ErrInvalidBlock is wrapped by the error of a write the block refuses:
// a scope, label, limit or text it cannot hold, or an edit that does not
// apply (text to replace that is not there once).
var ErrInvalidBlock = errors.New("invalid memory block write")

// ErrBlockReadOnly is wrapped by the error of a model's edit of a
// read-only block.
var ErrBlockReadOnly = memory.ErrReadOnly

// BlockStoreOf returns the block store of st: st itself when it keeps
// memory blocks (SQLite, PostgreSQL), else one in this process's memory
// (a directory of files keeps none; its blocks do not survive the
// process), the same one for every call with st, so engines sharing a
// store share its blocks.
func BlockStoreOf(st Store) record.BlockStore {
	if bs, ok := st.(record.BlockStore); ok {
		return bs
	}
	if st == nil {
		return record.NewMemoryBlocks()
	}
	bs, _ := processBlocks.LoadOrStore(st, record.NewMemoryBlocks())
	return bs.(record.BlockStore)
}

// processBlocks are the in-memory block stores of stores that keep no
// blocks, one per store: the engines sharing a store share its blocks.
var processBlocks sync.Map

// blockData is a block's stored content (record.Block.Data).
type blockData struct {
	Description string `json:"description,omitempty"`
	Value       string `json:"value"`
	Limit       int    `json:"limit"`
	Unit        string `json:"unit"`
	ReadOnly    bool   `json:"read_only,omitempty"`
}

func encodeBlock(b memory.Block) []byte {
	data, _ := json.Marshal(blockData{Description: b.Description, Value: b.Value, Limit: b.Limit, Unit: b.Unit, ReadOnly: b.ReadOnly}) // plain data
	return data
}

func decodeBlock(rb record.Block) (memory.Block, error) {
	sc, err := memory.ParseScope(rb.Scope)
	if err != nil {
		return memory.Block{}, fmt.Errorf("stored block %q: %w: %w", rb.Label, ErrDamaged, err)
	}
	b := memory.Block{Scope: sc, Label: rb.Label, Version: rb.Version}
	if rb.Deleted {
		return b, nil
	}
	var d blockData
	if err := json.Unmarshal(rb.Data, &d); err != nil {
		return memory.Block{}, fmt.Errorf("stored block %q of %s: %w: %w", rb.Label, rb.Scope, ErrDamaged, err)
	}
	b.Description, b.Value, b.Limit, b.Unit, b.ReadOnly = d.Description, d.Value, d.Limit, d.Unit, d.ReadOnly
	return b, nil
}

// MemoryCounter counts a block's tokens with the profile's tokenizer.
func (e *Engine) MemoryCounter() (func(string) int, error) {
	c := e.sessionConfig.Counter
	if c == nil {
		var err error
		if c, err = tokenizer.Get(e.sessionConfig.Encoding); err != nil {
			return nil, err
		}
	}
	return c.Count, nil
}

// MemoryBlocks returns the blocks of the scopes, sorted by scope then
// label.
func (e *Engine) MemoryBlocks(ctx context.Context, scopes ...MemoryScope) ([]MemoryBlock, error) {
	keys := make([]string, len(scopes))
	for i, sc := range scopes {
		keys[i] = sc.String()
	}
	stored, err := e.blocks.Blocks(ctx, keys)
	if err != nil {
		if ctx.Err() != nil {
			return nil, err
		}
		return nil, fmt.Errorf("%w: %w", ErrStoreRead, err)
	}
	out := make([]MemoryBlock, 0, len(stored))
	for _, rb := range stored {
		b, err := decodeBlock(rb)
		if err != nil {
			return nil, err
		}
		out = append(out, b)
	}
	return out, nil
}

// MemoryBlock returns block label of scope; a block not stored wraps
// ErrBlockNotFound.
func (e *Engine) MemoryBlock(ctx context.Context, scope MemoryScope, label string) (MemoryBlock, error) {
	blocks, err := e.MemoryBlocks(ctx, scope)
	if err != nil {
		return MemoryBlock{}, err
	}
	for _, b := range blocks {
		if b.Label == label {
			return b, nil
		}
	}
	return MemoryBlock{}, fmt.Errorf("block %q of %s: %w", label, scope, ErrBlockNotFound)
}

// check normalizes and validates b and refuses a value over its limit.
func (e *Engine) check(b MemoryBlock) (MemoryBlock, error) {
	b = b.Normalize()
	if err := b.Validate(); err != nil {
		return b, fmt.Errorf("%w: %w", ErrInvalidBlock, err)
	}
	count, err := e.MemoryCounter()
	if err != nil {
		return b, err
	}
	return b, b.CheckLimit(count)
}

// PutMemoryBlock writes b as version expected+1 of its block (expected 0:
// a block never written): the limit defaults to 5,000 characters, a value
// over the limit is refused naming it (ErrBlockOverLimit), and a block
// whose version is not expected fails with ErrVersionConflict. The block
// as stored is returned.
func (e *Engine) PutMemoryBlock(ctx context.Context, b MemoryBlock, expected uint64) (MemoryBlock, error) {
	b, err := e.check(b)
	if err != nil {
		return MemoryBlock{}, err
	}
	if err := e.putBlock(ctx, b.Scope, record.Block{Scope: b.Scope.String(), Label: b.Label, Data: encodeBlock(b)}, expected); err != nil {
		return MemoryBlock{}, err
	}
	b.Version = expected + 1
	return b, nil
}

// Edit changes a block's value (Append, Replace); Model marks an edit
// the model asked for (a read-only block refuses it).
type Edit struct {
	Apply func(MemoryBlock) (MemoryBlock, error)
	Model bool
}

// AppendEdit appends text to a block's value on a new line.
func AppendEdit(text string, model bool) Edit {
	return Edit{Apply: func(b MemoryBlock) (MemoryBlock, error) { return b.Append(text), nil }, Model: model}
}

// ReplaceEdit replaces the one occurrence of old in a block's value.
func ReplaceEdit(old, new string, model bool) Edit {
	return Edit{Apply: func(b MemoryBlock) (MemoryBlock, error) { return b.Replace(old, new) }, Model: model}
}

// maxEditTries bounds how often EditMemoryBlock reads again after losing
// a race with another writer of the block.
const maxEditTries = 8

// EditMemoryBlock applies edit to the block's current value and writes
// it: with expected set, only over that version; with expected 0, over
// whatever version it read, reading again when another writer got there
// first (so concurrent appends are all kept).
func (e *Engine) EditMemoryBlock(ctx context.Context, scope MemoryScope, label string, edit Edit, expected uint64) (MemoryBlock, error) {
	for try := 0; ; try++ {
		cur, err := e.MemoryBlock(ctx, scope, label)
		if err != nil {
			return MemoryBlock{}, err
		}
		if edit.Model && cur.ReadOnly {
			return MemoryBlock{}, fmt.Errorf("block %q of %s: %w", label, scope, ErrBlockReadOnly)
		}
		if expected != 0 && cur.Version != expected {
			return MemoryBlock{}, fmt.Errorf("block %q of %s at version %d, expected %d: %w", label, scope, cur.Version, expected, ErrVersionConflict)
		}
		next, err := edit.Apply(cur)
		if err != nil {
			return MemoryBlock{}, fmt.Errorf("%w: %w", ErrInvalidBlock, err)
		}
		b, err := e.PutMemoryBlock(ctx, next, cur.Version)
		if errors.Is(err, ErrVersionConflict) && expected == 0 && try+1 < maxEditTries {
			continue
		}
		return b, err
	}
}

// DeleteMemoryBlock deletes the block (its versions are kept): over
// version expected, or its current one when expected is 0.
func (e *Engine) DeleteMemoryBlock(ctx context.Context, scope MemoryScope, label string, expected uint64) error {
	if expected == 0 {
		cur, err := e.MemoryBlock(ctx, scope, label)
		if err != nil {
			return err
		}
		expected = cur.Version
	}
	return e.deleteBlock(ctx, scope, label, expected)
}

// MemoryBlockVersions returns every version of the block, oldest first; a
// deleted version has only its scope, label and version.
func (e *Engine) MemoryBlockVersions(ctx context.Context, scope MemoryScope, label string) ([]MemoryBlock, error) {
	stored, err := e.blocks.BlockVersions(ctx, scope.String(), label)
	if err != nil {
		return nil, err
	}
	out := make([]MemoryBlock, len(stored))
	for i, rb := range stored {
		if out[i], err = decodeBlock(rb); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// ForgetSessionMemory deletes the blocks of session id's own scope (when
// the session is deleted).
func (e *Engine) ForgetSessionMemory(ctx context.Context, id string) error {
	scope := MemoryScope{Kind: memory.KindSession, Name: id}
	blocks, err := e.MemoryBlocks(ctx, scope)
	if err != nil {
		return err
	}
	for _, b := range blocks {
		if err := e.deleteBlock(ctx, scope, b.Label, b.Version); err != nil && !errors.Is(err, ErrBlockNotFound) {
			return err
		}
	}
	return nil
}

// ProfileAgent is the agent the profile's sessions belong to unless they
// name their own: the memory block's agent, else the profile's name.
func (e *Engine) ProfileAgent() string {
	if e.Context.Memory.Agent != "" {
		return e.Context.Memory.Agent
	}
	return e.Context.Name
}

// defaultBlock is an HCL block as a memory block of scope.
func defaultBlock(d *config.MemoryBlock, scope MemoryScope) MemoryBlock {
	return MemoryBlock{Scope: scope, Label: d.Label, Description: d.Description, Value: d.Value, Limit: d.Limit, Unit: d.Unit, ReadOnly: d.ReadOnly}
}

// seedMemory writes the profile's HCL blocks that belong to the given
// scope kinds and are not stored yet: a block written before (or deleted)
// is left as it is. agent is the agent scope to seed.
func (e *Engine) seedMemory(ctx context.Context, session, agent string) error {
	for _, d := range e.Context.Memory.Blocks {
		var scope MemoryScope
		switch {
		case d.Scope == memory.KindSession && session != "":
			scope = MemoryScope{Kind: memory.KindSession, Name: session}
		case d.Scope == memory.KindAgent && agent != "":
			scope = MemoryScope{Kind: memory.KindAgent, Name: agent}
		case d.Scope == memory.KindGroup && session == "" && agent == "":
			scope = MemoryScope{Kind: memory.KindGroup, Name: d.Group}
		default:
			continue
		}
		if _, err := e.PutMemoryBlock(ctx, defaultBlock(d, scope), 0); err != nil && !errors.Is(err, ErrVersionConflict) {
			return fmt.Errorf("memory block %q of %s (%s): %w", d.Label, scope, d.DeclRange, err)
		}
	}
	return nil
}

// seedProfileMemory writes the HCL blocks of the profile's agent, its
// declared agents and its groups, when not stored yet.
func (e *Engine) seedProfileMemory(ctx context.Context) error {
	if len(e.Context.Memory.Blocks) == 0 {
		return nil
	}
	if err := e.seedMemory(ctx, "", ""); err != nil {
		return err
	}
	agents := []string{e.ProfileAgent()}
	if e.viewer != nil {
		for _, a := range e.Config.Agents {
			agents = append(agents, a.Name)
		}
	}
	for _, a := range agents {
		if err := e.seedMemory(ctx, "", a); err != nil {
			return err
		}
	}
	return nil
}

// membership is the agent and groups a session belongs to.
type membership struct {
	agent  string
	groups []string
}

// sessionMemory is a conversation's host.MemorySource: the blocks of its
// own scope, its agent's (the turn's agent on a multi-agent turn) and
// its groups'.
type sessionMemory struct {
	engine *Engine
	id     string
	member atomic.Pointer[membership]
}

var _ host.MemorySource = (*sessionMemory)(nil)

func (m *sessionMemory) Blocks(ctx context.Context, agent string) ([]MemoryBlock, error) {
	return m.engine.MemoryBlocks(ctx, m.scopes(agent)...)
}

// scopes are the scopes the session sees on a turn of agent.
func (m *sessionMemory) scopes(agent string) []MemoryScope {
	mb := m.member.Load()
	if agent == "" {
		agent = mb.agent
	}
	out := []MemoryScope{{Kind: memory.KindSession, Name: m.id}, {Kind: memory.KindAgent, Name: agent}}
	for _, g := range mb.groups {
		out = append(out, MemoryScope{Kind: memory.KindGroup, Name: g})
	}
	return out
}

// set takes the session's agent and groups from its record: the
// record's own, else the profile's agent; the profile's groups and the
// record's.
func (m *sessionMemory) set(r Record) {
	mb := &membership{agent: r.Agent}
	if mb.agent == "" {
		mb.agent = m.engine.ProfileAgent()
	}
	mb.groups = append(slices.Clone(m.engine.Context.Memory.Groups), r.Groups...)
	for _, d := range m.engine.Context.Memory.Blocks {
		if d.Scope == memory.KindGroup {
			mb.groups = append(mb.groups, d.Group)
		}
	}
	slices.Sort(mb.groups)
	mb.groups = slices.Compact(mb.groups)
	m.member.Store(mb)
}

// MemoryScopes returns the scopes the session sees on its own turns: its
// own, its agent's and its groups'.
func (s *Session) MemoryScopes() []MemoryScope {
	if s.memory == nil {
		return nil
	}
	return s.memory.scopes("")
}

// SetMembership names the agent and the groups the session belongs to
// (beyond the profile's), saved in its record at once; the agent's HCL
// blocks are written when not stored yet.
func (s *Session) SetMembership(ctx context.Context, agent string, groups []string) error {
	if s.memory == nil {
		return errors.New("memory blocks need a conversation profile")
	}
	for _, name := range append([]string{agent}, groups...) {
		if name == "" {
			continue
		}
		if err := (MemoryScope{Kind: memory.KindGroup, Name: name}).Validate(); err != nil {
			return fmt.Errorf("membership: %w", err)
		}
	}
	r, err := s.Record()
	if err != nil {
		return err
	}
	r.Agent, r.Groups = agent, slices.Clone(groups)
	if err := s.SetRecord(r); err != nil {
		return err
	}
	if err := s.SaveRecord(); err != nil {
		return err
	}
	if agent != "" {
		return s.engine.seedMemory(ctx, "", agent)
	}
	return nil
}

// The kinds of memory scope.
const (
	ScopeSession = memory.KindSession
	ScopeAgent   = memory.KindAgent
	ScopeGroup   = memory.KindGroup
)

// ParseMemoryScope reads session:ID, agent:NAME or group:NAME.
func ParseMemoryScope(s string) (MemoryScope, error) { return memory.ParseScope(s) }

// VisibleBlocks is what a session shows of blocks: one per label, the
// most specific scope's (session over agent over group), sorted by label.
func VisibleBlocks(blocks []MemoryBlock) []MemoryBlock { return memory.Visible(blocks) }
