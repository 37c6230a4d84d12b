package sdk

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"runtime/debug"
	"slices"
	"sync"

	"github.com/ctxhost/ctxhost/internal/lru"
	"github.com/ctxhost/ctxhost/internal/prefix"
)

// LocalPlugin runs a Plugin in-process behind the host's view of a context
// plugin: its methods match host.ContextPlugin exactly. It keeps one
// Session per session id, made lazily by Plugin.NewSession; calls into one
// session are serialized, calls into different sessions run concurrently.
// The server that serve.Plugin (package sdk/serve) runs is a thin adapter
// over a LocalPlugin.
type LocalPlugin struct {
	plugin Plugin
	info   PluginInfo

	mu       sync.Mutex
	sessions map[string]*sessionEntry
}

// sessionEntry is one session's instance and the lock serializing its calls.
type sessionEntry struct {
	mu      sync.Mutex
	session Session
	ended   bool
}

// NewLocalPlugin wraps p. It calls p.Describe once and completes the
// description (see Info).
func NewLocalPlugin(p Plugin) *LocalPlugin {
	return &LocalPlugin{plugin: p, info: completeInfo(p), sessions: map[string]*sessionEntry{}}
}

// completeInfo fills in what the SDK knows better than the author: the
// protocol version, the default slot, and the capabilities found by probing
// the type of one session. The probe session is made with the empty
// session id (never a real one), closed if it is a Closer, and dropped.
func completeInfo(p Plugin) PluginInfo {
	info := p.Describe()
	info.ProtocolVersion = ProtocolVersion
	if info.Slot == "" {
		info.Slot = SlotContext
	}
	info.Capabilities = append([]string(nil), info.Capabilities...)
	probe := p.NewSession("")
	add := func(ok bool, c string) {
		if ok && !slices.Contains(info.Capabilities, c) {
			info.Capabilities = append(info.Capabilities, c)
		}
	}
	_, compactor := probe.(Compactor)
	_, stater := probe.(Stater)
	_, hook := probe.(PreparedHook)
	add(compactor, CapCompact)
	add(stater, CapState)
	add(hook, CapPrepared)
	_, summarizer := probe.(Summarizer)
	add(summarizer, CapSummarize)
	slices.Sort(info.Capabilities)
	if c, ok := probe.(Closer); ok {
		_ = c.Close()
	}
	return info
}

// Info returns the plugin's description as completed by the SDK:
// ProtocolVersion is set, an empty Slot becomes SlotContext, and the
// capabilities compact, state and prepared are added when a session
// implements Compactor, Stater or PreparedHook (sorted, without duplicates).
func (l *LocalPlugin) Info() PluginInfo { return l.info }

// Configure passes config to the plugin when it is a Configurer. A plugin
// that is not accepts only an empty config (nothing, null or {}); anything
// else is ErrInvalidArgs, as is a config that is not a JSON object.
func (l *LocalPlugin) Configure(ctx context.Context, config json.RawMessage) error {
	empty := isEmptyJSON(config)
	if !empty {
		var obj map[string]json.RawMessage
		if err := json.Unmarshal(config, &obj); err != nil {
			return InvalidArgs("config is not a JSON object: %v", err)
		}
	}
	c, ok := l.plugin.(Configurer)
	if !ok {
		if empty {
			return nil
		}
		return InvalidArgs("plugin %q takes no config", l.info.Name)
	}
	return guard(func() error { return c.Configure(config) })
}

// Component returns the session's component (nil when it has none).
func (l *LocalPlugin) Component(ctx context.Context, session, encoding string) (c *Component, err error) {
	err = l.with(session, func(s Session) error {
		c, err = s.Component(ctx, encoding)
		return err
	})
	return c, err
}

// Compact asks the session to free tokens; it fails when the session does
// not implement Compactor.
func (l *LocalPlugin) Compact(ctx context.Context, session string, req CompactRequest) (res CompactResult, err error) {
	err = l.with(session, func(s Session) error {
		c, ok := s.(Compactor)
		if !ok {
			return fmt.Errorf("plugin %q cannot compact: its Session does not implement sdk.Compactor", l.info.Name)
		}
		res, err = c.Compact(ctx, req)
		return err
	})
	return res, err
}

// Summarize asks the session to condense a span of history; it fails when
// the session does not implement Summarizer.
func (l *LocalPlugin) Summarize(ctx context.Context, session string, req SummarizeRequest) (res SummarizeResult, err error) {
	err = l.with(session, func(s Session) error {
		c, ok := s.(Summarizer)
		if !ok {
			return fmt.Errorf("plugin %q cannot summarize: its Session does not implement sdk.Summarizer", l.info.Name)
		}
		res, err = c.Summarize(ctx, req)
		return err
	})
	return res, err
}

// Apply runs op on the session. Args that are not valid JSON are rejected
// with ErrInvalidArgs before the plugin sees them.
func (l *LocalPlugin) Apply(ctx context.Context, session, op string, args json.RawMessage) (out json.RawMessage, err error) {
	if len(args) > 0 && !json.Valid(args) {
		return nil, InvalidArgs("args of op %q are not valid JSON", op)
	}
	err = l.with(session, func(s Session) error {
		out, err = s.Apply(ctx, op, args)
		return err
	})
	return out, err
}

// Prepared notifies the session of a prepared context; a session that is
// not a PreparedHook ignores it.
func (l *LocalPlugin) Prepared(ctx context.Context, session string, budget Budget) error {
	return l.with(session, func(s Session) error {
		if h, ok := s.(PreparedHook); ok {
			return h.Prepared(ctx, budget)
		}
		return nil
	})
}

// State exports the session's state; it fails when the session does not
// implement Stater.
func (l *LocalPlugin) State(ctx context.Context, session string) (state []byte, err error) {
	err = l.with(session, func(s Session) error {
		st, ok := s.(Stater)
		if !ok {
			return fmt.Errorf("plugin %q has no state: its Session does not implement sdk.Stater", l.info.Name)
		}
		state, err = st.State()
		return err
	})
	return state, err
}

// Restore replaces the session's state; it fails when the session does not
// implement Stater.
func (l *LocalPlugin) Restore(ctx context.Context, session string, state []byte) error {
	return l.with(session, func(s Session) error {
		st, ok := s.(Stater)
		if !ok {
			return fmt.Errorf("plugin %q cannot restore: its Session does not implement sdk.Stater", l.info.Name)
		}
		return st.Restore(state)
	})
}

// EndSession drops the session's instance, closing it if it is a Closer.
// The next call for that id starts a fresh session. Ending an unknown
// session is not an error.
func (l *LocalPlugin) EndSession(ctx context.Context, session string) error {
	l.mu.Lock()
	e, ok := l.sessions[session]
	delete(l.sessions, session)
	l.mu.Unlock()
	if !ok {
		return nil
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	e.ended = true
	if c, ok := e.session.(Closer); ok {
		return guard(c.Close)
	}
	return nil
}

// Sessions returns the number of live sessions.
func (l *LocalPlugin) Sessions() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.sessions)
}

// with runs fn on the session's instance, made on first use, holding the
// session's lock. A panic in the author's code becomes an error.
func (l *LocalPlugin) with(session string, fn func(Session) error) error {
	if session == "" {
		return InvalidArgs("empty session id")
	}
	for {
		e := l.entry(session)
		e.mu.Lock()
		if e.ended { // ended between lookup and lock: use the fresh one
			e.mu.Unlock()
			continue
		}
		err := guard(func() error { return fn(e.session) })
		e.mu.Unlock()
		return err
	}
}

func (l *LocalPlugin) entry(session string) *sessionEntry {
	l.mu.Lock()
	defer l.mu.Unlock()
	e, ok := l.sessions[session]
	if !ok {
		e = &sessionEntry{session: l.plugin.NewSession(session)}
		l.sessions[session] = e
	}
	return e
}

// guard runs fn, turning a panic into an error so that one bad call does
// not take down every session of the process.
func guard(fn func() error) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("plugin panicked: %v\n%s", r, debug.Stack())
		}
	}()
	return fn()
}

func isEmptyJSON(b json.RawMessage) bool {
	s := string(bytes.TrimSpace(b))
	return s == "" || s == "null" || s == "{}"
}

// LocalAssembler runs an Assembler in-process behind the host's view of an
// assembler: its methods match host.Assembler exactly.
type LocalAssembler struct {
	asm      Assembler
	info     AssemblerInfo
	readOnly bool // asm is a RequestReader
	inline   bool // RunInline
	// joins keeps, per stream (session and agent), the last payload
	// joined from a head and a rest for a caller that reuses payloads.
	joins *lru.Cache[joinKey, *joinStream]
}

type joinKey struct{ session, agent string }

// joinStream is a stream's last joined payload: buf, whose first
// len(head) bytes are head's, an append-only slice (see
// AssembleResult.PayloadHead).
type joinStream struct {
	mu   sync.Mutex
	head []byte
	buf  []byte
}

// NewLocalAssembler wraps a, calling a.Describe once and setting the
// protocol version.
func NewLocalAssembler(a Assembler) *LocalAssembler {
	info := a.Describe()
	info.ProtocolVersion = ProtocolVersion
	_, readOnly := a.(RequestReader)
	return &LocalAssembler{asm: a, info: info, readOnly: readOnly, joins: lru.New[joinKey, *joinStream](localJoinStreams)}
}

// RunInline marks l as an assembler the host may call on the turn's own
// goroutine, without a watchdog for its deadline: one that computes on its
// request alone and never blocks, as ctxhost's built-in assemblers do. It
// returns l. Leave it unset for an assembler that may wait on anything.
func (l *LocalAssembler) RunInline() *LocalAssembler {
	l.inline = true
	return l
}

// Inline reports whether l was marked with RunInline, for every agent
// (host.InlineAssembler).
func (l *LocalAssembler) Inline(string) bool { return l.inline }

// localJoinStreams is how many streams a LocalAssembler keeps a joined
// payload for.
const localJoinStreams = 256

// ReleaseSession drops the payloads joined for session's streams and,
// when the assembler is a SessionReleaser, what it keeps for session.
func (l *LocalAssembler) ReleaseSession(session string) {
	l.joins.DeleteFunc(func(k joinKey) bool { return k.session == session })
	if r, ok := l.asm.(SessionReleaser); ok {
		r.ReleaseSession(session)
	}
}

// Info returns the assembler's description with ProtocolVersion set.
func (l *LocalAssembler) Info() AssemblerInfo { return l.info }

// Assemble runs the assembler on a copy of req's components and messages
// (the assembler may change what it is given, as a remote one may: the
// host shares them with its own state), or on req itself when the
// assembler is a RequestReader; a panic becomes an error. A payload
// answered in two parts (PayloadHead) is joined: with req.ReusePayload in
// the memory of the stream's last payload, where the head that extends
// the last one costs only what it added (an append turn is O(appended),
// not O(payload)); otherwise into a new array.
//
// With req.ReusePayload, Repeats says how many leading bytes the payload
// shares with the stream's last one (those of the head it extends).
func (l *LocalAssembler) Assemble(ctx context.Context, req AssembleRequest) (AssembleResult, error) {
	res, err := l.AssembleParts(ctx, req)
	if err != nil || (len(res.PayloadHead) == 0 && !req.ReusePayload) {
		return res, err
	}
	if !req.ReusePayload {
		res.Payload, res.PayloadHead = res.Whole(), nil
		return res, nil
	}
	st := l.joins.GetOrAdd(joinKey{req.Session, req.Agent.Name}, func() *joinStream { return &joinStream{} })
	st.mu.Lock()
	defer st.mu.Unlock()
	if len(res.PayloadHead) == 0 { // answered whole: the next one repeats nothing known
		st.head = nil
		return res, nil
	}
	res.Payload, res.Repeats = st.join(res.PayloadHead, res.Payload)
	res.PayloadHead = nil
	return res, nil
}

// join writes head then rest into the stream's buffer and returns them
// joined, with how many leading bytes the joined payload keeps from the
// last one. A head that shares its array with the last one and is at
// least as long repeats it (the head is append-only), so only its new
// bytes are copied; a head in a new array (the assembler's buffer grew,
// or its history was replaced) is compared with the last one, which
// costs what the assembler spent making the new array. The buffer grows
// by a quarter when full.
func (st *joinStream) join(head, rest []byte) ([]byte, int) {
	keep := 0
	if n := len(st.head); n > 0 && len(head) >= n && &head[0] == &st.head[0] {
		keep = n
	} else if n > 0 {
		keep = prefix.Common(st.buf[:n], head)
	}
	need := len(head) + len(rest)
	buf := st.buf[:keep]
	if need > cap(buf) {
		buf = append(make([]byte, 0, need+need/4+4096), buf...)
	}
	buf = append(append(buf, head[keep:]...), rest...)
	st.head, st.buf = head, buf
	return buf[:len(buf):len(buf)], keep
}

// AssembleParts is Assemble without joining a payload answered in two
// parts: PayloadHead is left as the assembler set it (sdk/serve answers a
// delta from it).
func (l *LocalAssembler) AssembleParts(ctx context.Context, req AssembleRequest) (res AssembleResult, err error) {
	if !l.readOnly {
		req.ImmutableMessages = false // the copies are the assembler's to change
		req.Components = append([]Component(nil), req.Components...)
		for i := range req.Components {
			if msgs := req.Components[i].Messages; msgs != nil {
				req.Components[i].Messages = append([]Message(nil), msgs...)
			}
		}
	}
	err = guard(func() error {
		res, err = l.asm.Assemble(ctx, req)
		return err
	})
	return res, err
}
