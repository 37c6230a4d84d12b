package server

import (
	"strings"
	"time"

	"google.golang.org/protobuf/proto"

	"github.com/ctxhost/ctxhost/api/servicev1"
)

// Defaults of the Limits fields left zero.
const (
	DefaultMaxAppendMessages = 1000
	DefaultMaxAppendBytes    = 4 << 20
	DefaultLockWait          = 10 * time.Second
)

// Limits bound what one call may ask of the server, so that no call holds
// a session (or the server's memory) for long.
type Limits struct {
	// MaxAppendMessages bounds the messages of one AppendMessages call
	// (default DefaultMaxAppendMessages).
	MaxAppendMessages int
	// MaxAppendBytes bounds the encoded size of the messages of one
	// AppendMessages call (default DefaultMaxAppendBytes).
	MaxAppendBytes int
	// LockWait bounds how long a call waits for another call of the same
	// session to finish before it is answered UNAVAILABLE (default
	// DefaultLockWait).
	LockWait time.Duration
}

func (l Limits) withDefaults() Limits {
	if l.MaxAppendMessages <= 0 {
		l.MaxAppendMessages = DefaultMaxAppendMessages
	}
	if l.MaxAppendBytes <= 0 {
		l.MaxAppendBytes = DefaultMaxAppendBytes
	}
	if l.LockWait <= 0 {
		l.LockWait = DefaultLockWait
	}
	return l
}

// checkAppend refuses an AppendMessages call over the limits, before
// anything is looked at.
func (l Limits) checkAppend(msgs []*servicev1.Message) error {
	if len(msgs) > l.MaxAppendMessages {
		return invalidf("messages: %d in one call, at most %d: split the call", len(msgs), l.MaxAppendMessages)
	}
	size := 0
	for i, m := range msgs {
		size += proto.Size(m)
		for _, name := range []string{m.GetId(), m.GetName(), m.GetToolCallId()} {
			if strings.ContainsRune(name, 0) {
				return invalidf("message %d: an id or name holds a NUL byte", i)
			}
		}
	}
	if size > l.MaxAppendBytes {
		return invalidf("messages: %d bytes in one call, at most %d: split the call", size, l.MaxAppendBytes)
	}
	return nil
}
