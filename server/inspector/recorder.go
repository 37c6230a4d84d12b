package inspector

import (
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/ctxhost/ctxhost/engine"
)

// Limits bound what a Recorder holds (zero fields: their defaults).
type Limits struct {
	// Sessions is how many sessions are held; past it the session seen
	// least recently is dropped (default 1,000).
	Sessions int
	// Turns is how many turns of a session are held, the oldest dropped
	// first (default 100,000).
	Turns int
	// Payloads is how many of a session's last turns keep their payload
	// and their messages as shown (default 256).
	Payloads int
	// PayloadBytes bounds the payloads held in all (default 256 MiB);
	// past it the oldest turns' payloads are dropped.
	PayloadBytes int
}

func (l Limits) withDefaults() Limits {
	if l.Sessions <= 0 {
		l.Sessions = 1000
	}
	if l.Turns <= 0 {
		l.Turns = 100_000
	}
	if l.Payloads <= 0 {
		l.Payloads = 256
	}
	if l.PayloadBytes <= 0 {
		l.PayloadBytes = 256 << 20
	}
	return l
}

// SessionInfo summarizes one session the recorder holds.
type SessionInfo struct {
	ID       string    `json:"id"`
	Profile  string    `json:"profile"`
	Upstream string    `json:"upstream,omitempty"`
	Model    string    `json:"model,omitempty"`
	First    time.Time `json:"first"`
	Last     time.Time `json:"last"`
	Turns    int       `json:"turns"`
	// Compactions counts the held turns that compacted.
	Compactions int     `json:"compactions"`
	Window      int     `json:"window"`
	Used        int     `json:"used"`
	Utilization float64 `json:"utilization"`
	Status      string  `json:"status"`
}

// Recorder holds the turns of the sessions a server prepares, in memory,
// within its Limits. It is safe for concurrent use.
type Recorder struct {
	limits Limits

	mu       sync.Mutex
	sessions map[string]*recorded
	bytes    int // payload bytes held
	subs     map[int]chan struct{}
	nextSub  int
	// seq numbers the turns recorded (the latest's); log holds the
	// latest LogSize events, a ring: event number k at (k-1) % LogSize.
	seq uint64
	log []Event
}

// LogSize is how many of the latest turns' events a Recorder holds for
// a stream to resume from (see Since).
const LogSize = 4096

// recorded is one session's turns: turns[i] is turn first+i.
type recorded struct {
	info    SessionInfo
	first   int // number of turns[0]
	turns   []*Detail
	payload int // index in turns of the oldest turn holding its payload
	// shown is how the latest turn showed its messages (its runs): a
	// steady turn shows the same messages again, and takes each run
	// that shows alike instead of scanning its texts for markers.
	shown []*shownRun
}

// Event is one live notice: a session's new turn, numbered among the
// turns the recorder recorded (Seq, from 1).
type Event struct {
	Seq     uint64 `json:"seq"`
	Session string `json:"session"`
	Turn    Turn   `json:"turn"`
}

// NewRecorder returns an empty recorder.
func NewRecorder(l Limits) *Recorder {
	return &Recorder{limits: l.withDefaults(), sessions: map[string]*recorded{}, subs: map[int]chan struct{}{}}
}

// Record keeps a prepared turn of call c. It copies what it keeps of p
// (valid only during the call) and tells the subscribers.
func (r *Recorder) Record(c Call, p *engine.Prepared) {
	if r == nil || p == nil {
		return
	}
	r.mu.Lock()
	var before []*shownRun
	if s := r.sessions[c.Session]; s != nil {
		before = s.shown
	}
	r.mu.Unlock()
	d := detailOf(c, p, len(p.Payload) <= r.limits.PayloadBytes/4, before)
	r.mu.Lock()
	s := r.sessions[c.Session]
	if s == nil {
		r.dropSessions()
		s = &recorded{info: SessionInfo{ID: c.Session, First: d.Time}, first: 1}
		r.sessions[c.Session] = s
	}
	d.N = s.first + len(s.turns)
	s.turns = append(s.turns, d)
	s.shown = d.runs
	r.bytes += len(d.Payload)
	in := &s.info
	in.Profile, in.Last, in.Turns = c.Profile, d.Time, d.N
	if c.Upstream != "" {
		in.Upstream = c.Upstream
	}
	if c.Model != "" {
		in.Model = c.Model
	}
	if d.Compaction != nil {
		in.Compactions++
	}
	in.Window, in.Used, in.Utilization, in.Status = d.Budget.Window, d.Budget.Used, d.Budget.Utilization, d.Budget.Status
	r.trim(s)
	r.seq++
	ev := Event{Seq: r.seq, Session: c.Session, Turn: d.Turn}
	if len(r.log) < LogSize {
		r.log = append(r.log, ev)
	} else {
		r.log[(r.seq-1)%LogSize] = ev
	}
	for _, ch := range r.subs {
		select {
		case ch <- struct{}{}:
		default: // told already: it reads every event since its last (Since)
		}
	}
	r.mu.Unlock()
}

// trim drops what s and the recorder hold past the limits. r.mu is held.
func (r *Recorder) trim(s *recorded) {
	if over := len(s.turns) - r.limits.Turns; over > 0 {
		for _, d := range s.turns[:over] {
			if s.info.Compactions > 0 && d.Compaction != nil {
				s.info.Compactions--
			}
			r.dropPayload(d)
		}
		s.turns = append(s.turns[:0:0], s.turns[over:]...)
		s.first += over
		s.payload = max(0, s.payload-over)
	}
	for len(s.turns)-s.payload > r.limits.Payloads {
		r.dropPayload(s.turns[s.payload])
		s.payload++
	}
	for r.bytes > r.limits.PayloadBytes && r.dropOldestPayload() {
	}
}

func (r *Recorder) dropPayload(d *Detail) {
	r.bytes -= len(d.Payload)
	d.Payload, d.runs, d.Texts, d.HasPayload = "", nil, nil, false
}

// dropOldestPayload drops the payload of the session seen least recently
// that holds one.
func (r *Recorder) dropOldestPayload() bool {
	var oldest *recorded
	for _, s := range r.sessions {
		if s.payload < len(s.turns) && (oldest == nil || s.info.Last.Before(oldest.info.Last)) {
			oldest = s
		}
	}
	if oldest == nil {
		return false
	}
	r.dropPayload(oldest.turns[oldest.payload])
	oldest.payload++
	return true
}

// dropSessions makes room for one more session. r.mu is held.
func (r *Recorder) dropSessions() {
	for len(r.sessions) >= r.limits.Sessions {
		var oldest *recorded
		for _, s := range r.sessions {
			if oldest == nil || s.info.Last.Before(oldest.info.Last) {
				oldest = s
			}
		}
		for _, d := range oldest.turns {
			r.bytes -= len(d.Payload)
		}
		delete(r.sessions, oldest.info.ID)
	}
}

// SessionQuery selects sessions: Text matches the id, profile, upstream
// or model (case-insensitive); Since and Until bound the last turn's
// time (zero: unbounded).
type SessionQuery struct {
	Text          string
	Profile       string
	Upstream      string
	Since, Until  time.Time
	Offset, Limit int
}

// Sessions returns the sessions matching q, the most recent first, and
// how many match.
func (r *Recorder) Sessions(q SessionQuery) ([]SessionInfo, int) {
	text := strings.ToLower(q.Text)
	r.mu.Lock()
	var all []SessionInfo
	for _, s := range r.sessions {
		in := s.info
		switch {
		case q.Profile != "" && in.Profile != q.Profile,
			q.Upstream != "" && in.Upstream != q.Upstream,
			!q.Since.IsZero() && in.Last.Before(q.Since),
			!q.Until.IsZero() && in.Last.After(q.Until),
			text != "" && !strings.Contains(strings.ToLower(in.ID+"\x00"+in.Profile+"\x00"+in.Upstream+"\x00"+in.Model), text):
			continue
		}
		all = append(all, in)
	}
	r.mu.Unlock()
	sort.Slice(all, func(i, j int) bool {
		if !all[i].Last.Equal(all[j].Last) {
			return all[i].Last.After(all[j].Last)
		}
		return all[i].ID < all[j].ID
	})
	return page(all, q.Offset, q.Limit), len(all)
}

// Session returns one session's summary.
func (r *Recorder) Session(id string) (SessionInfo, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	s, ok := r.sessions[id]
	if !ok {
		return SessionInfo{}, false
	}
	return s.info, true
}

// Turns returns the turns of session id numbered from on (at most limit),
// their payloads left out, and the numbers of the first and last turns
// held.
func (r *Recorder) Turns(id string, from, limit int) (turns []Turn, first, last int, ok bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	s, ok := r.sessions[id]
	if !ok {
		return nil, 0, 0, false
	}
	first, last = s.first, s.first+len(s.turns)-1
	i := max(0, from-s.first)
	end := len(s.turns)
	if limit > 0 {
		end = min(end, i+limit)
	}
	for ; i < end; i++ {
		turns = append(turns, s.turns[i].Turn)
	}
	return turns, first, last, true
}

// Turn returns turn n of session id with its payload and its messages as
// shown (when still held).
func (r *Recorder) Turn(id string, n int) (Detail, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	s, ok := r.sessions[id]
	if !ok || n < s.first || n >= s.first+len(s.turns) {
		return Detail{}, false
	}
	d := *s.turns[n-s.first]
	d.Messages, d.runs = messagesOf(d.runs), nil
	return d, true
}

// Subscribe returns a channel told whenever a turn is recorded (Since
// then answers the events), and the func that ends the subscription.
func (r *Recorder) Subscribe() (<-chan struct{}, func()) {
	ch := make(chan struct{}, 1)
	r.mu.Lock()
	id := r.nextSub
	r.nextSub++
	r.subs[id] = ch
	r.mu.Unlock()
	return ch, func() {
		r.mu.Lock()
		delete(r.subs, id)
		r.mu.Unlock()
	}
}

// Seq is the number of the latest turn recorded (0: none yet).
func (r *Recorder) Seq() uint64 {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.seq
}

// Since returns the events of the turns recorded after number seq, in
// order, the number of the latest turn, and whether the events are all
// of those after seq: not when some are no longer held (more than
// LogSize turns since) or seq is ahead of the recorder (a stream of a
// server since restarted).
func (r *Recorder) Since(seq uint64) (evs []Event, latest uint64, all bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if seq > r.seq {
		return nil, r.seq, false
	}
	first := r.seq - uint64(len(r.log)) + 1 // the oldest held
	from := max(seq+1, first)
	evs = make([]Event, 0, r.seq+1-from)
	for k := from; k <= r.seq; k++ {
		evs = append(evs, r.log[(k-1)%LogSize])
	}
	return evs, r.seq, seq+1 >= first
}

func page[T any](all []T, offset, limit int) []T {
	if offset >= len(all) {
		return nil
	}
	all = all[max(0, offset):]
	if limit > 0 && limit < len(all) {
		all = all[:limit]
	}
	return all
}
