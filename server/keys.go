package server

import (
	"crypto/sha256"
	"encoding/hex"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"

	"github.com/ctxhost/ctxhost/engine"
)

// maxKeyBytes bounds an idempotency key.
const maxKeyBytes = 200

// checkKey refuses a request with another digest than the one the key
// answered (records of earlier versions have none: not checked).
func checkKey(r *engine.KeyRecord, digest string) error {
	if r.Digest != "" && digest != "" && r.Digest != digest {
		return invalidf("idempotency_key %q was used for a different request (other content); use a new key for a new request", r.Key)
	}
	return nil
}

// requestDigest identifies a request's content: the SHA-256 of its type
// and deterministic encoding, without its write options or idempotency
// key (a retry may change neither, but they are not content), nor a
// Prepare's naming of the payload its caller holds (a retry whose client
// lost the answer, or started again, holds another one).
func requestDigest(req proto.Message) string {
	if req == nil {
		return ""
	}
	m := proto.Clone(req)
	fields := m.ProtoReflect().Descriptor().Fields()
	for _, name := range []protoreflect.Name{"write", "idempotency_key", "known_payload_tag", "accept_payload_suffix"} {
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
