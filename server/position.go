package server

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"

	"github.com/ctxhost/ctxhost/record"
)

// maxKeys is how many idempotency keys a session remembers (the most
// recent ones).
const maxKeys = 256

// maxKeyBytes bounds an idempotency key.
const maxKeyBytes = 200

// position is what the server keeps in a session's position
// (host.Session.SetPosition): the session's profile and its recent
// idempotency keys with their answers. It is saved in the same store
// write as the change it describes.
type position struct {
	Profile string      `json:"profile"`
	Keys    []keyRecord `json:"keys,omitempty"`
}

// keyRecord is the answer of one write made with an idempotency key, with
// the digest of the request it answers. Seq 0 marks an AppendMessages
// saved one message at a time by an earlier version that stopped part
// way: Done messages (IDs) were applied, and a retry with the key
// continues after them.
// Prepare's payload and ApplyOp's result are not stored: the session's
// recent answers in memory (answers) carry them.
type keyRecord struct {
	Key  string   `json:"k"`
	Seq  uint64   `json:"s,omitempty"`
	IDs  []string `json:"ids,omitempty"`
	Done int      `json:"d,omitempty"`
	// Digest is requestDigest of the request (empty in records of
	// earlier versions: not checked).
	Digest string `json:"h,omitempty"`
}

// check refuses a request with another digest than the one the key
// answered.
func (r *keyRecord) check(digest string) error {
	if r.Digest != "" && digest != "" && r.Digest != digest {
		return invalidf("idempotency_key %q was used for a different request (other content); use a new key for a new request", r.Key)
	}
	return nil
}

// requestDigest identifies a request's content: the SHA-256 of its type
// and deterministic encoding, without its write options or idempotency
// key (a retry may change neither, but they are not content).
func requestDigest(req proto.Message) string {
	if req == nil {
		return ""
	}
	m := proto.Clone(req)
	fields := m.ProtoReflect().Descriptor().Fields()
	for _, name := range []protoreflect.Name{"write", "idempotency_key"} {
		if f := fields.ByName(name); f != nil {
			m.ProtoReflect().Clear(f)
		}
	}
	b, err := proto.MarshalOptions{Deterministic: true}.Marshal(m)
	if err != nil {
		return ""
	}
	h := sha256.New()
	h.Write([]byte(m.ProtoReflect().Descriptor().FullName()))
	h.Write([]byte{0})
	h.Write(b)
	return hex.EncodeToString(h.Sum(nil)[:16])
}

func decodePosition(raw json.RawMessage) (position, error) {
	var p position
	if len(raw) == 0 {
		return p, nil
	}
	if err := json.Unmarshal(raw, &p); err != nil {
		return p, fmt.Errorf("session position %.80s: %w", raw, err)
	}
	return p, nil
}

func (p position) encode() json.RawMessage {
	b, _ := json.Marshal(p) // plain data
	return b
}

// find returns the record of key, or nil.
func (p position) find(key string) *keyRecord {
	for i := len(p.Keys) - 1; i >= 0; i-- {
		if p.Keys[i].Key == key {
			return &p.Keys[i]
		}
	}
	return nil
}

// with returns p with rec as key's record (replacing an older one), the
// oldest records dropped beyond maxKeys.
func (p position) with(rec keyRecord) position {
	keys := make([]keyRecord, 0, len(p.Keys)+1)
	for _, k := range p.Keys {
		if k.Key != rec.Key {
			keys = append(keys, k)
		}
	}
	keys = append(keys, rec)
	if len(keys) > maxKeys {
		keys = keys[len(keys)-maxKeys:]
	}
	return position{Profile: p.Profile, Keys: keys}
}

// storedPosition reads the position a store holds for a session: the
// last event's that carries one, else the snapshot's.
func storedPosition(st record.StoredSession) (position, error) {
	var withPos struct {
		Position json.RawMessage `json:"position"`
	}
	for i := len(st.Events) - 1; i >= 0; i-- {
		withPos.Position = nil
		if err := json.Unmarshal(st.Events[i], &withPos); err != nil {
			return position{}, fmt.Errorf("stored event: %w", err)
		}
		if len(withPos.Position) > 0 && string(withPos.Position) != "null" {
			return decodePosition(withPos.Position)
		}
	}
	withPos.Position = nil
	if err := json.Unmarshal(st.Snapshot, &withPos); err != nil {
		return position{}, fmt.Errorf("stored snapshot: %w", err)
	}
	return decodePosition(withPos.Position)
}
