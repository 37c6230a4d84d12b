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
	DefaultAdmissionWait     = 2 * time.Second
)

// admissionShare is the part of the memory limit the calls in flight and
// the sessions held share (the admission budget); the rest is the
// collector's room: with the live heap at most this share of the limit,
// the collector keeps the process's memory within the limit without
// falling behind a call's allocations.
const admissionShare = 0.6

// What an RPC is charged on the admission budget per byte of its body
// (decoded, converted to messages, kept in the session, encoded for the
// store), and what a body without a declared length is charged at a time
// as it is read.
const (
	rpcWeight = 6
	rpcStep   = 64 << 10
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
	// AdmissionWait bounds how long a call waits for room in the memory
	// budget (a share of the memory limit) before it is answered as
	// overloaded (default DefaultAdmissionWait).
	AdmissionWait time.Duration
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
	if l.AdmissionWait <= 0 {
		l.AdmissionWait = DefaultAdmissionWait
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
		if err := checkNames(i, m); err != nil {
			return err
		}
	}
	if size > l.MaxAppendBytes {
		return invalidf("messages: %d bytes in one call, at most %d: split the call", size, l.MaxAppendBytes)
	}
	return nil
}

// checkNames refuses a NUL byte in message i's identifiers and names,
// naming the field: they are matched and shown as text (by plugins, in
// logs, in provider payloads that key on them), where a NUL cuts or
// confuses them. Content and arguments may hold NUL: they are kept as
// given, byte for byte, in every store (JSON escapes it as \u0000 and
// the stores keep bytes, not text columns).
func checkNames(i int, m *servicev1.Message) error {
	fields := [...]struct{ name, value string }{
		{"id", m.GetId()}, {"name", m.GetName()}, {"tool_call_id", m.GetToolCallId()}, {"tool_name", m.GetToolName()},
	}
	for _, f := range fields {
		if strings.IndexByte(f.value, 0) >= 0 {
			return invalidf("messages[%d].%s: holds a NUL byte", i, f.name)
		}
	}
	for j, tc := range m.GetToolCalls() {
		if strings.IndexByte(tc.GetId(), 0) >= 0 {
			return invalidf("messages[%d].tool_calls[%d].id: holds a NUL byte", i, j)
		}
		if strings.IndexByte(tc.GetName(), 0) >= 0 {
			return invalidf("messages[%d].tool_calls[%d].name: holds a NUL byte", i, j)
		}
	}
	return nil
}
