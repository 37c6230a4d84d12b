package inspector

import "github.com/ctxhost/ctxhost/sdk"

// runLen is how many consecutive messages of a component one shownRun
// holds (the last run of a component may hold fewer).
const runLen = 64

// marks are the marks a message may be shown with, in the order a
// shownRun counts them.
var marks = [...]string{"masked", "cut", "stripped", "omitted", "summarized"}

// shownRun is up to runLen consecutive messages of one component as a
// turn showed them, with what their showing depends on. A run never
// changes once made: the turns of a session share the runs they show
// alike, so that a steady turn, which shows the previous turn's
// messages and one more, makes only its last run and keeps a pointer to
// each of the others.
type shownRun struct {
	component string
	keys      []shownKey
	shown     []Shown
	marked    [len(marks)]int
}

// shownKey is what a message's showing depends on (messageText's inputs,
// its id, role, kind and summary_of metadata), kept without the inline
// bytes of its media, which the showing does not read.
type shownKey struct {
	id, role, kind, summaryOf, content string
	parts                              []sdk.Part
	calls                              []sdk.ToolCall
}

func keyOf(m sdk.Message) shownKey {
	k := shownKey{id: m.ID, role: m.Role, kind: m.Kind, summaryOf: m.Metadata["summary_of"], content: m.Content}
	if len(m.Parts) > 0 {
		k.parts = make([]sdk.Part, len(m.Parts))
		for i, p := range m.Parts {
			p.Data = nil
			k.parts[i] = p
		}
	}
	if len(m.ToolCalls) > 0 {
		k.calls = append([]sdk.ToolCall(nil), m.ToolCalls...)
	}
	return k
}

// shows reports whether message m is shown as k's message was. Equal
// strings that are the very same (a steady turn's messages) compare at
// once.
func (k *shownKey) shows(m *sdk.Message) bool {
	if k.content != m.Content || k.id != m.ID || k.role != m.Role || k.kind != m.Kind ||
		len(k.parts) != len(m.Parts) || len(k.calls) != len(m.ToolCalls) || k.summaryOf != m.Metadata["summary_of"] {
		return false
	}
	for i := range k.parts {
		if !samePart(&k.parts[i], &m.Parts[i]) {
			return false
		}
	}
	for i := range k.calls {
		if k.calls[i] != m.ToolCalls[i] {
			return false
		}
	}
	return true
}

// samePart compares every field of two parts but their inline bytes.
func samePart(a, b *sdk.Part) bool {
	return a.Type == b.Type && a.Text == b.Text && a.MediaType == b.MediaType && a.URL == b.URL && a.Width == b.Width &&
		a.Height == b.Height && a.Detail == b.Detail && a.Pages == b.Pages && a.Title == b.Title && a.Signature == b.Signature &&
		a.Opaque == b.Opaque && a.Provider == b.Provider
}

// same reports whether msgs are shown exactly as r's messages were.
func (r *shownRun) same(component string, msgs []sdk.Message) bool {
	if r.component != component || len(r.keys) != len(msgs) {
		return false
	}
	for i := range msgs {
		if !r.keys[i].shows(&msgs[i]) {
			return false
		}
	}
	return true
}

// runAt is where a message with an id shows in a turn's runs.
type runAt struct {
	run *shownRun
	i   int
}

// shower shows one turn's messages from the previous turn's runs.
type shower struct {
	before []*shownRun
	byID   map[[2]string]runAt // made when first needed
}

// show returns the runs of msgs, the messages of component comp, reusing
// the runs and messages of before (the previous turn's runs, from
// start: the first of comp's) that show alike.
func (sh *shower) show(comp string, msgs []sdk.Message, start int) []*shownRun {
	var out []*shownRun
	for at := 0; at < len(msgs); at += runLen {
		chunk := msgs[at:min(at+runLen, len(msgs))]
		var prev *shownRun
		if k := start + at/runLen; k < len(sh.before) && sh.before[k].component == comp {
			prev = sh.before[k]
		}
		if prev != nil && prev.same(comp, chunk) {
			out = append(out, prev)
			continue
		}
		out = append(out, sh.newRun(comp, chunk, prev))
	}
	return out
}

// newRun makes the run of chunk, taking each message's showing from the
// same place in prev, or else (a message moved or changed) from where
// its id showed in the previous turn.
func (sh *shower) newRun(comp string, chunk []sdk.Message, prev *shownRun) *shownRun {
	r := &shownRun{component: comp, keys: make([]shownKey, len(chunk)), shown: make([]Shown, len(chunk))}
	for i := range chunk {
		m := &chunk[i]
		var s Shown
		found := false
		if prev != nil && i < len(prev.keys) {
			if prev.keys[i].shows(m) {
				r.keys[i], s, found = prev.keys[i], prev.shown[i], true
			} else if m.ID != "" {
				if at, ok := sh.lookup(comp, m.ID); ok && at.run.keys[at.i].shows(m) {
					r.keys[i], s, found = at.run.keys[at.i], at.run.shown[at.i], true
				}
			}
		}
		if !found {
			r.keys[i] = keyOf(*m)
			s = shownOf(comp, *m)
		}
		r.shown[i] = s
		if s.Mark != "" {
			for j, mk := range marks {
				if mk == s.Mark {
					r.marked[j]++
				}
			}
		}
	}
	return r
}

// lookup finds where the message id of component comp showed in the
// previous turn.
func (sh *shower) lookup(comp, id string) (runAt, bool) {
	if sh.byID == nil {
		sh.byID = map[[2]string]runAt{}
		for _, r := range sh.before {
			for i := range r.keys {
				if r.keys[i].id != "" {
					sh.byID[[2]string{r.component, r.keys[i].id}] = runAt{r, i}
				}
			}
		}
	}
	at, ok := sh.byID[[2]string{comp, id}]
	return at, ok
}

// firstRun is the index in runs of component comp's first run, or
// len(runs) when it has none.
func firstRun(runs []*shownRun, comp string) int {
	for i, r := range runs {
		if r.component == comp {
			return i
		}
	}
	return len(runs)
}

// messagesOf lists the messages of runs in order.
func messagesOf(runs []*shownRun) []Shown {
	n := 0
	for _, r := range runs {
		n += len(r.shown)
	}
	if n == 0 {
		return nil
	}
	out := make([]Shown, 0, n)
	for _, r := range runs {
		out = append(out, r.shown...)
	}
	return out
}
