package server

import "google.golang.org/protobuf/proto"

// keptAnswers is how many answers of keyed calls that the store does not
// keep (Prepare's payload, ApplyOp's result) a session remembers in
// memory, the most recent ones: a retry soon after is answered in full.
// A payload may be large, so only a few are kept.
const keptAnswers = 2

// keyedAnswer is the whole answer of a keyed call.
type keyedAnswer struct {
	key string
	seq uint64
	msg proto.Message
}

// answers are a session's recent keyed answers, guarded by its lock.
type answers []keyedAnswer

// keep remembers msg as the answer of key at seq.
func (a *answers) keep(key string, seq uint64, msg proto.Message) {
	if key == "" {
		return
	}
	kept := append(*a, keyedAnswer{key: key, seq: seq, msg: proto.Clone(msg)})
	if len(kept) > keptAnswers { // a new array: the dropped answers are not held
		kept = append([]keyedAnswer(nil), kept[len(kept)-keptAnswers:]...)
	}
	*a = kept
}

// find returns a copy of the answer kept for key at seq, or nil (the
// answer was made before the server started, or is no longer kept).
func (a answers) find(key string, seq uint64) proto.Message {
	for i := len(a) - 1; i >= 0; i-- {
		if a[i].key == key && a[i].seq == seq {
			return proto.Clone(a[i].msg)
		}
	}
	return nil
}
