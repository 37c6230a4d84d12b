package team

import (
	"errors"
	"fmt"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/ctxhost/ctxhost/sdk"
	"github.com/hashicorp/go-hclog"
)

// Defaults of Options.
const (
	DefaultWindowSize       = 5
	DefaultMaxBytes         = 768 * 1024
	DefaultTeamTaskMaxBytes = 5 * 1024
	DefaultMarkerPattern    = `\[NEXT:[^\]]+\]`
)

// Agent types with a first-party assembler.
const (
	TypeClaudeCode   = "claude-code"
	TypeOpenAICodex  = "openai-codex"
	TypeGoogleGemini = "google-gemini"
)

// Errors of the team API; returned errors wrap them.
var (
	// ErrNoTeam: the team has no agents, so there is no member to look up
	// (an agent looked up in no team is a caller's mistake, not an
	// empty view).
	ErrNoTeam = errors.New("no team set: the team has no agents")
	// ErrUnknownAgent: the agent is not a member of the team.
	ErrUnknownAgent = errors.New("unknown agent")
	// ErrInvalidMessage: AddMessage or ImportSnapshot rejected a message.
	ErrInvalidMessage = errors.New("invalid message")
	// ErrTooLarge: the payload exceeds MaxBytes even without any context.
	ErrTooLarge = errors.New("payload exceeds max bytes")
)

// Agent is one member of the team.
type Agent struct {
	// Type is the agent's type (claude-code, openai-codex, google-gemini,
	// or another): the session's assembler routes by agent.
	Type string
	// SystemInstruction and InstructionFileText form the system body
	// (assembly.SystemBody).
	SystemInstruction   string
	InstructionFileText string
	// WindowSize overrides the team's window when not nil.
	WindowSize *int
}

// Options configure a Team. The zero value is valid: every unset field
// takes its default.
type Options struct {
	// WindowSize is the number of messages before the current one an agent
	// sees; nil means DefaultWindowSize (0 is allowed).
	WindowSize *int
	// MaxBytes bounds payload + system text; 0 means DefaultMaxBytes.
	MaxBytes int
	// TeamTaskMaxBytes caps the team task; 0 means DefaultTeamTaskMaxBytes.
	TeamTaskMaxBytes int
	// MarkerPatterns are the routing markers (Go regexps) stripped from
	// the view; nil means [DefaultMarkerPattern].
	MarkerPatterns []string
	// DisableDedup turns AI→AI deduplication off (it is on by default).
	DisableDedup bool
	// Agents are the team members by name.
	Agents map[string]Agent
	// Logger receives warnings; nil means a null logger.
	Logger hclog.Logger
	// OnEvent, when set, is called for every Event.
	OnEvent func(Event)
}

// Team holds one multi-agent conversation: its messages, its team task and
// its members. It is safe for concurrent use.
type Team struct {
	opts    Options
	window  int
	markers []*regexp.Regexp
	logger  hclog.Logger

	mu       sync.Mutex
	messages []sdk.Message
	ids      map[string]bool
	nextSeq  int
	teamTask *string
}

// New builds a Team. It fails on a negative window or a marker pattern
// that does not compile.
func New(opts Options) (*Team, error) {
	t := &Team{opts: opts, window: DefaultWindowSize, ids: map[string]bool{}, logger: opts.Logger}
	if opts.WindowSize != nil {
		if *opts.WindowSize < 0 {
			return nil, fmt.Errorf("team: window size %d is negative", *opts.WindowSize)
		}
		t.window = *opts.WindowSize
	}
	for name, a := range opts.Agents {
		if a.WindowSize != nil && *a.WindowSize < 0 {
			return nil, fmt.Errorf("team: agent %q: window size %d is negative", name, *a.WindowSize)
		}
	}
	if t.opts.MaxBytes <= 0 {
		t.opts.MaxBytes = DefaultMaxBytes
	}
	if t.opts.TeamTaskMaxBytes <= 0 {
		t.opts.TeamTaskMaxBytes = DefaultTeamTaskMaxBytes
	}
	patterns := opts.MarkerPatterns
	if patterns == nil {
		patterns = []string{DefaultMarkerPattern}
	}
	for _, p := range patterns {
		re, err := regexp.Compile(`(?:` + p + `)[ \t]*`)
		if err != nil {
			return nil, fmt.Errorf("team: marker pattern %q: %w", p, err)
		}
		t.markers = append(t.markers, re)
	}
	if t.logger == nil {
		t.logger = hclog.NewNullLogger()
	}
	return t, nil
}

// MaxBytes is the byte budget of a payload.
func (t *Team) MaxBytes() int { return t.opts.MaxBytes }

// AgentNames returns the members' names, sorted.
func (t *Team) AgentNames() []string {
	names := make([]string, 0, len(t.opts.Agents))
	for n := range t.opts.Agents {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// StripMarkers removes every routing marker (and the blanks after it) from
// text and trims the result.
func (t *Team) StripMarkers(text string) string {
	for _, re := range t.markers {
		text = re.ReplaceAllString(text, "")
	}
	return strings.TrimSpace(text)
}

// AddMessage validates m and appends it. A message needs a speaker name,
// a speaker type (human or ai; when empty, taken from the role: user is
// human, assistant is ai), content that is valid UTF-8 and not blank, no
// tool calls, and an id not used before (an empty id is generated: m1,
// m2, ...). The role defaults from the speaker type. An invalid message is
// an error wrapping ErrInvalidMessage and nothing is stored. The stored
// message is returned.
func (t *Team) AddMessage(m sdk.Message) (sdk.Message, error) {
	t.mu.Lock()
	m, err := t.normalize(m)
	if err != nil {
		t.mu.Unlock()
		return sdk.Message{}, err
	}
	if m.ID == "" {
		m.ID = t.newID()
	}
	t.ids[m.ID] = true
	t.messages = append(t.messages, m)
	t.mu.Unlock()
	t.emit(Event{Type: EventMessageAdded, Message: &m})
	return m, nil
}

// newID returns the next generated id not in use. Callers hold t.mu.
func (t *Team) newID() string {
	for {
		t.nextSeq++
		id := "m" + strconv.Itoa(t.nextSeq)
		if !t.ids[id] {
			return id
		}
	}
}

// normalize validates m against the stored messages. Callers hold t.mu.
func (t *Team) normalize(m sdk.Message) (sdk.Message, error) {
	if err := validateMessage(&m); err != nil {
		return sdk.Message{}, err
	}
	if m.ID != "" && t.ids[m.ID] {
		return sdk.Message{}, fmt.Errorf("%w: id %q is already used", ErrInvalidMessage, m.ID)
	}
	return m, nil
}

// validateMessage checks m and fills in its role or speaker type.
func validateMessage(m *sdk.Message) error {
	if strings.TrimSpace(m.Name) == "" {
		return fmt.Errorf("%w: no speaker name", ErrInvalidMessage)
	}
	if m.SpeakerType == "" {
		switch m.Role {
		case sdk.RoleUser:
			m.SpeakerType = sdk.SpeakerHuman
		case sdk.RoleAssistant:
			m.SpeakerType = sdk.SpeakerAI
		default:
			return fmt.Errorf("%w: speaker %q has no speaker type (human or ai)", ErrInvalidMessage, m.Name)
		}
	}
	if m.SpeakerType != sdk.SpeakerHuman && m.SpeakerType != sdk.SpeakerAI {
		return fmt.Errorf("%w: speaker %q has speaker type %q, want human or ai", ErrInvalidMessage, m.Name, m.SpeakerType)
	}
	switch m.Role {
	case "":
		m.Role = sdk.RoleUser
		if m.SpeakerType == sdk.SpeakerAI {
			m.Role = sdk.RoleAssistant
		}
	case sdk.RoleUser, sdk.RoleAssistant:
	default:
		return fmt.Errorf("%w: speaker %q: role %q, want user or assistant", ErrInvalidMessage, m.Name, m.Role)
	}
	if !utf8.ValidString(m.Content) || !utf8.ValidString(m.Name) {
		return fmt.Errorf("%w: speaker %q: content is not valid UTF-8", ErrInvalidMessage, m.Name)
	}
	if strings.TrimSpace(m.Content) == "" {
		return fmt.Errorf("%w: speaker %q: empty content", ErrInvalidMessage, m.Name)
	}
	if len(m.ToolCalls) > 0 || m.ToolCallID != "" {
		return fmt.Errorf("%w: speaker %q: team messages carry no tool calls or results", ErrInvalidMessage, m.Name)
	}
	return nil
}

// Messages returns a copy of every message, in order.
func (t *Team) Messages() []sdk.Message {
	t.mu.Lock()
	defer t.mu.Unlock()
	return append([]sdk.Message(nil), t.messages...)
}

// LatestMessage returns the last message, or false when there is none.
func (t *Team) LatestMessage() (sdk.Message, bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if len(t.messages) == 0 {
		return sdk.Message{}, false
	}
	return t.messages[len(t.messages)-1], true
}

// SetTeamTask sets the team task. A blank task clears it. A task longer
// than TeamTaskMaxBytes is truncated at the last UTF-8 boundary within
// the cap, with a warning and an EventTeamTaskTruncated; a task of exactly
// the cap is kept whole. It reports whether the task was truncated.
func (t *Team) SetTeamTask(task string) (truncated bool) {
	original := len(task)
	if len(task) > t.opts.TeamTaskMaxBytes {
		task = truncateUTF8(task, t.opts.TeamTaskMaxBytes)
		truncated = true
	}
	t.mu.Lock()
	if strings.TrimSpace(task) == "" {
		t.teamTask = nil
	} else {
		t.teamTask = &task
	}
	t.mu.Unlock()
	if truncated {
		t.logger.Warn("[ContextManager] team task truncated", "bytes", original, "max_bytes", t.opts.TeamTaskMaxBytes)
		t.emit(Event{Type: EventTeamTaskTruncated, TeamTask: task, Detail: fmt.Sprintf("team task of %d bytes truncated to %d (max %d)", original, len(task), t.opts.TeamTaskMaxBytes)})
	}
	stored, _ := t.TeamTask()
	t.emit(Event{Type: EventTeamTaskChanged, TeamTask: stored})
	return truncated
}

// truncateUTF8 cuts s to at most n bytes, never inside a UTF-8 sequence.
func truncateUTF8(s string, n int) string {
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}

// TeamTask returns the team task, or false when none is set.
func (t *Team) TeamTask() (string, bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.teamTask == nil {
		return "", false
	}
	return *t.teamTask, true
}

// Clear removes every message and the team task.
func (t *Team) Clear() {
	t.mu.Lock()
	t.messages, t.ids, t.teamTask, t.nextSeq = nil, map[string]bool{}, nil, 0
	t.mu.Unlock()
}

// Reset is Clear.
func (t *Team) Reset() { t.Clear() }

func (t *Team) emit(e Event) {
	if t.opts.OnEvent != nil {
		t.opts.OnEvent(e)
	}
}
