// Package inspector is the web inspector of `ctxhost serve`, under /ui on
// the serve port: the sessions a server has seen, each session's turns
// (tokens per component against the window, compactions and what each
// step freed, prompt-cache reads and cost, the payload as sent with its
// masked, cut, stripped and omitted messages marked), the originals of
// those messages, a diff of any two turns' payloads, and a live stream of
// new turns. It is fed by a Recorder, which the call path and the
// service's Prepare tell of every turn they prepare; it keeps what it
// holds in memory, bounded (Limits).
package inspector

import (
	"strings"
	"time"

	"github.com/ctxhost/ctxhost/engine"
	"github.com/ctxhost/ctxhost/sdk"
)

// Turn is what the inspector keeps of one prepared turn.
type Turn struct {
	// N numbers the session's turns seen by this server, from 1.
	N        int       `json:"n"`
	Time     time.Time `json:"time"`
	Source   string    `json:"source"` // "callpath" or "service"
	Upstream string    `json:"upstream,omitempty"`
	Endpoint string    `json:"endpoint,omitempty"`
	Model    string    `json:"model,omitempty"`
	// Outcome is "ok" or the call's failure ("upstream_5xx", ...); Status
	// the HTTP status answered (call path only).
	Outcome    string  `json:"outcome"`
	Status     int     `json:"status,omitempty"`
	DurationMS float64 `json:"duration_ms"`
	Action     string  `json:"action"`
	Budget     Budget  `json:"budget"`
	// Before is the budget's used tokens before compaction.
	BeforeUsed int         `json:"before_used"`
	Compaction *Compaction `json:"compaction,omitempty"`
	Cache      *Cache      `json:"cache,omitempty"`
	Usage      *Usage      `json:"usage,omitempty"`
	Warnings   []string    `json:"warnings,omitempty"`
	// Marked counts the payload's messages shown otherwise than whole,
	// by mark.
	Marked       map[string]int `json:"marked,omitempty"`
	PayloadBytes int            `json:"payload_bytes"`
	// HasPayload: the inspector still holds this turn's payload.
	HasPayload bool `json:"has_payload"`
}

// Budget is a turn's window and what filled it.
type Budget struct {
	Window      int         `json:"window"`
	Reserved    int         `json:"reserved"`
	Available   int         `json:"available"`
	Used        int         `json:"used"`
	Calibrated  int         `json:"calibrated_used"`
	Utilization float64     `json:"utilization"`
	Status      string      `json:"status"`
	Overhead    int         `json:"overhead"`
	Warning     float64     `json:"warning"`  // the utilization of the warning line
	Critical    float64     `json:"critical"` // and of the critical line
	Components  []Component `json:"components"`
}

// Component is one component's tokens in a turn.
type Component struct {
	Name   string `json:"name"`
	Tokens int    `json:"tokens"`
}

// Compaction is a turn's compaction: why, and each step.
type Compaction struct {
	Reason   string `json:"reason"`
	Decision string `json:"decision,omitempty"`
	Target   int    `json:"target"`
	Before   int    `json:"before"`
	After    int    `json:"after"`
	Deficit  int    `json:"deficit"`
	Freed    int    `json:"freed"`
	Met      bool   `json:"met"`
	Steps    []Step `json:"steps"`
}

// Step is one component's part in a compaction.
type Step struct {
	Component  string  `json:"component"`
	Action     string  `json:"action"`
	Asked      int     `json:"asked"`
	Claimed    int     `json:"claimed"`
	Freed      int     `json:"freed"`
	DurationMS float64 `json:"duration_ms"`
	Log        string  `json:"log,omitempty"`
	Discarded  string  `json:"discarded,omitempty"`
}

// Cache is a turn's prompt-cache split and cost (the price model's units),
// beside the unmanaged history's cost at the same turn.
type Cache struct {
	Read          int     `json:"read"`
	Write         int     `json:"write"`
	Uncached      int     `json:"uncached"`
	ReadShare     float64 `json:"read_share"`
	Cost          float64 `json:"cost"`
	UnmanagedCost float64 `json:"unmanaged_cost"`
	PrefixKept    bool    `json:"prefix_kept"`
}

// Usage is what the upstream reported of a call.
type Usage struct {
	Input       int `json:"input_tokens"`
	Output      int `json:"output_tokens"`
	CacheRead   int `json:"cache_read_tokens"`
	CacheCreate int `json:"cache_creation_tokens"`
}

// Shown is one message of a turn's payload as the context showed it.
type Shown struct {
	Component string `json:"component"`
	ID        string `json:"id,omitempty"`
	Role      string `json:"role"`
	Kind      string `json:"kind,omitempty"`
	// Mark is "" for a message shown whole, else "masked", "cut",
	// "stripped", "omitted" (the marker standing for omitted messages;
	// Omitted says how many) or "summarized".
	Mark    string `json:"mark,omitempty"`
	Omitted int    `json:"omitted,omitempty"`
	Text    string `json:"text"`
	// More is how many bytes of the text are not kept.
	More int `json:"more,omitempty"`
}

// Detail is a turn with its payload and its messages as shown.
type Detail struct {
	Turn
	MediaType string  `json:"media_type,omitempty"`
	Payload   string  `json:"payload,omitempty"`
	Messages  []Shown `json:"messages,omitempty"`
	// Texts are the turn's text components (system prompt, plugins).
	Texts []Shown `json:"texts,omitempty"`
	// runs hold the messages as shown while the recorder holds the turn
	// (Messages is listed from them when the turn is asked for).
	runs []*shownRun
}

// Call describes the call a turn was prepared for.
type Call struct {
	Session  string
	Profile  string
	Source   string
	Upstream string
	Endpoint string
	Model    string
	Outcome  string
	Status   int
	Duration time.Duration
	Usage    *Usage
	// Warning and Critical are the profile's threshold utilizations.
	Warning, Critical float64
}

// keptText is how much of a shown message's text a turn keeps.
const keptText = 4 << 10

// detailOf converts a prepared turn into what the inspector keeps of it,
// with how the session's previous turn showed its messages (before, its
// runs; nil for none). The turn's messages as shown are in its runs,
// shared with before where they show alike, so that a steady turn costs
// what changed and a comparison of each message with the one it was.
// It copies everything it keeps: p is only valid during the call.
func detailOf(c Call, p *engine.Prepared, keepPayload bool, before []*shownRun) *Detail {
	b := p.Budget
	t := Turn{Time: time.Now().UTC(), Source: c.Source, Upstream: c.Upstream, Endpoint: c.Endpoint, Model: c.Model,
		Outcome: c.Outcome, Status: c.Status, DurationMS: ms(c.Duration), Action: string(p.Action), Usage: c.Usage,
		Budget: Budget{Window: b.Window, Reserved: b.Reserved, Available: b.Available, Used: b.Used, Calibrated: b.CalibratedUsed,
			Utilization: b.Utilization, Status: b.Status, Overhead: b.Overhead, Warning: c.Warning, Critical: c.Critical},
		BeforeUsed: p.Before.Used, PayloadBytes: len(p.Payload), Warnings: append([]string(nil), p.Warnings...)}
	for _, ct := range b.Components {
		t.Budget.Components = append(t.Budget.Components, Component{Name: ct.Name, Tokens: ct.Tokens})
	}
	if r := p.Compaction; r != nil {
		cp := &Compaction{Reason: r.Reason, Decision: r.Decision, Target: r.Target, Before: r.Before, After: r.After,
			Deficit: r.Deficit, Freed: r.Freed, Met: r.Met}
		for _, st := range r.Steps {
			cp.Steps = append(cp.Steps, Step{Component: st.Component, Action: st.Action, Asked: st.Asked, Claimed: st.Claimed,
				Freed: st.Freed, DurationMS: ms(st.Duration), Log: st.Log, Discarded: st.Discarded})
		}
		t.Compaction = cp
	}
	if cr := p.Cache; cr != nil {
		m := cr.Managed
		ca := &Cache{Read: m.Read, Write: m.Write, Uncached: m.Uncached, Cost: m.Cost, UnmanagedCost: cr.Unmanaged.Cost, PrefixKept: cr.PrefixKept}
		if total := m.Read + m.Write + m.Uncached; total > 0 {
			ca.ReadShare = float64(m.Read) / float64(total)
		}
		t.Cache = ca
	}
	d := &Detail{Turn: t, MediaType: p.MediaType}
	sh := shower{before: before}
	for _, comp := range p.Components {
		if !comp.IsMessages() {
			if comp.Text != "" {
				text, more := clip(comp.Text)
				d.Texts = append(d.Texts, Shown{Component: comp.Name, Role: "text", Text: text, More: more})
			}
			continue
		}
		d.runs = append(d.runs, sh.show(comp.Name, comp.Messages, firstRun(before, comp.Name))...)
	}
	var marked [len(marks)]int
	for _, r := range d.runs {
		for i, n := range r.marked {
			marked[i] += n
		}
	}
	for i, n := range marked {
		if n > 0 {
			if d.Marked == nil {
				d.Marked = map[string]int{}
			}
			d.Marked[marks[i]] = n
		}
	}
	if keepPayload {
		d.Payload, d.HasPayload = string(p.Payload), true
	}
	return d
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

// clip keeps the first keptText bytes of s (at a rune boundary) and says
// how many more there were.
func clip(s string) (string, int) {
	if len(s) <= keptText {
		return s, 0
	}
	n := keptText
	for n > 0 && !utf8Start(s[n]) {
		n--
	}
	return s[:n], len(s) - n
}

func utf8Start(b byte) bool { return b&0xC0 != 0x80 }

// shownOf describes message m of component comp and how it is shown,
// from the markers the history puts in what it shows.
func shownOf(comp string, m sdk.Message) Shown {
	return shownOfText(comp, m, messageText(m))
}

// shownOfText is shownOf with m's text (messageText) given.
func shownOfText(comp string, m sdk.Message, text string) Shown {
	s := Shown{Component: comp, ID: m.ID, Role: m.Role, Kind: m.Kind}
	switch {
	case m.ID == "" && m.Role == sdk.RoleSystem && omittedCount(text) > 0:
		s.Mark, s.Omitted = "omitted", omittedCount(text)
	case sdk.IsMasked(text):
		s.Mark = "masked"
	case strings.Contains(text, " tokens cut from message "):
		s.Mark = "cut"
	case strings.Contains(text, " left out of the context; the original is retrievable by id "):
		s.Mark = "stripped"
	case m.Kind == "summary" || m.Metadata["summary_of"] != "":
		s.Mark = "summarized"
	}
	s.Text, s.More = clip(text)
	return s
}

// omittedCount reads the omission marker "[N earlier messages omitted
// for brevity]" (0: text is not one).
func omittedCount(text string) int {
	rest, ok := strings.CutPrefix(text, "[")
	if !ok || !strings.HasSuffix(rest, " earlier messages omitted for brevity]") {
		return 0
	}
	n := 0
	for _, c := range rest {
		if c < '0' || c > '9' {
			break
		}
		n = n*10 + int(c-'0')
	}
	return n
}

// messageText is m's text as one string: its content, or its parts'
// texts and one line for each other part, and its tool calls.
func messageText(m sdk.Message) string {
	if len(m.Parts) == 0 && len(m.ToolCalls) == 0 {
		return m.Content
	}
	var b strings.Builder
	b.WriteString(m.Content)
	for _, p := range m.Parts {
		if b.Len() > 0 {
			b.WriteByte('\n')
		}
		if p.Type == sdk.PartText {
			b.WriteString(p.Text)
		} else {
			b.WriteString(sdk.PartLine(p))
		}
	}
	for _, tc := range m.ToolCalls {
		if b.Len() > 0 {
			b.WriteByte('\n')
		}
		b.WriteString("call " + tc.Name + "(" + tc.Arguments + ")")
	}
	return b.String()
}
