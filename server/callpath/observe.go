package callpath

import (
	"errors"
	"time"

	"github.com/ctxhost/ctxhost/engine"
)

// Observed is one call that prepared a turn, told to Options.Observe.
type Observed struct {
	Session, Profile, Upstream, Endpoint, Model string
	// Prepared is the turn sent upstream; it is valid only during the
	// call to Observe (its payload's memory is reused by the next turn).
	Prepared *engine.Prepared
	// Outcome is "ok" or the failure's reason (a metrics label); Status
	// the HTTP status answered (0: none yet).
	Outcome  string
	Status   int
	Duration time.Duration
	// UsageKnown: the upstream reported the call's usage.
	UsageKnown                                          bool
	InputTokens, OutputTokens, CacheRead, CacheCreation int
}

// observed tells Options.Observe of the call's turn, holding the
// session's lock. err is the call's error.
func (c *call) observed(p *engine.Prepared, err error) {
	if c.h.observe == nil || p == nil || c.counting || c.unlocked { // unlocked: the session could not be taken again
		return
	}
	outcome := "ok"
	var ce *callError
	switch {
	case errors.As(err, &ce):
		outcome = ce.reason
	case err != nil:
		outcome = "internal"
	}
	c.h.observe(Observed{Session: c.session, Profile: c.u.Profile, Upstream: c.u.Name, Endpoint: c.d.endpoint(),
		Model: callModel(c.d, c.req), Prepared: p, Outcome: outcome, Status: c.status, Duration: time.Since(c.start),
		UsageKnown: c.usage.Known, InputTokens: c.usage.Prompt, OutputTokens: c.usage.Completion,
		CacheRead: c.usage.CacheRead, CacheCreation: c.usage.CacheWrite})
}
