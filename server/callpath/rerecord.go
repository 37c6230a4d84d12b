package callpath

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"net/http"

	"github.com/ctxhost/ctxhost/engine"
)

// recordChanged records an answer whose session another call changed
// while it came (the lock given up, see released): now is the session as
// held once the lock is taken again (read again from the store when it
// was unloaded meanwhile; nil: deleted), from the session's stored
// version when this call prepared it.
//
//   - When the session's history is still where the caller's
//     conversation was when it went upstream — the conversation starts
//     with it: another call only changed the view (compacted it), or
//     counted tokens, or the session was read again from the store
//     without this call's messages — the conversation's messages it lacks
//     are added again and the answer is recorded after them.
//   - Otherwise the history moved on (another call's question or answer
//     came after the conversation's, or the conversation was edited):
//     the answer is recorded on a session of its own, a branch holding
//     the caller's conversation and the answer, forked from the session
//     as it stood when this call prepared it where the store keeps
//     versions (its plugin state and memory blocks with it), else made
//     anew. The branch is named in Ctxhost-Answer-Branch (a trailer on a
//     stream); the session goes on as the other call left it.
//
// Either is counted (ctxhost_upstream_answers_moved_total) and logged.
// An answer whose session was deleted meanwhile is not recorded.
func (c *call) recordChanged(ctx context.Context, now *engine.Session, from uint64, a answer) error {
	c.elsewhere = true
	c.payloadID = 0         // the payload this call sent is not one of now's
	if c.req.after == nil { // the memo may have read only the conversation's tail
		if err := decode(c.d, c.req); err != nil {
			return failf(http.StatusBadRequest, "bad_request", "%v", err)
		}
	}
	if now == nil {
		_, _, c.usage = a.Result()
		c.h.metrics.unrecordedAnswer(c.u.Name)
		c.h.log.Warn("answer passed on unrecorded: its session was deleted while it came", "upstream", c.u.Name, "session", c.session)
		return nil
	}
	if startsWith(c.req.messages, agentView(now.Messages())) {
		if err := c.reconcileAgain(now); err != nil {
			return errors.Join(err, ErrUnsaved)
		}
		if err := c.record(now, a); err != nil {
			return err
		}
		c.h.metrics.movedAnswer(c.u.Name, "appended")
		c.h.log.Info("answer recorded after another call changed the session while it came: its conversation still leads to it",
			"upstream", c.u.Name, "session", c.session)
		return nil
	}
	branch := answerBranchID(c.session)
	forked := false
	if from > 0 && c.u.eng != nil && c.u.eng.KeepsCheckpoints() {
		_, err := c.u.eng.Fork(ctx, c.session, from, branch)
		if err != nil {
			c.h.log.Warn("fork the branch an answer is recorded on: made anew instead", "session", c.session, "branch", branch, "error", err)
		}
		forked = err == nil
	}
	main := c.session
	c.session = branch // what the answer leads to (a Responses id) is the branch's
	err := c.h.sessions.WithSession(ctx, branch, c.u.Profile, func(bs *engine.Session) error {
		if err := c.reconcileAgain(bs); err != nil {
			return errors.Join(err, ErrUnsaved)
		}
		return c.record(bs, a)
	})
	c.session = main
	if err != nil {
		return err
	}
	if c.out != nil {
		c.w.Header().Set(http.TrailerPrefix+AnswerBranchHeader, branch)
	} else {
		c.w.Header().Set(AnswerBranchHeader, branch)
	}
	c.h.metrics.movedAnswer(c.u.Name, "branch")
	c.h.log.Warn("answer recorded on a branch: another call moved the session's history on while it came",
		"upstream", c.u.Name, "session", main, "branch", branch, "forked", forked)
	return nil
}

// reconcileAgain brings the caller's conversation (decoded whole) onto
// es, which it starts with or replaces: its tools, its system text, the
// messages es lacks. The changes are held in memory: the answer's record
// saves them with it, in one store write.
func (c *call) reconcileAgain(es *engine.Session) error {
	return es.Hold(func() error {
		if err := setTools(es, c.req.tools); err != nil {
			return failf(http.StatusBadRequest, "bad_request", "tools: %v", err)
		}
		if _, err := reconcile(es, c.req, nil); err != nil {
			return failf(http.StatusBadRequest, "bad_request", "%v", err)
		}
		c.held = es.MessageCount()
		return nil
	})
}

// answerBranchID is a new session id for an answer of session id
// recorded on a branch: id, ":answer-" and 8 random hex digits, id cut
// to keep it within 128 bytes.
func answerBranchID(id string) string {
	b := make([]byte, 4)
	_, _ = rand.Read(b)
	suffix := ":answer-" + hex.EncodeToString(b)
	if len(id)+len(suffix) > 128 {
		id = id[:128-len(suffix)]
	}
	return id + suffix
}
