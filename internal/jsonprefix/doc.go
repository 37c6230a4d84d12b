// Package jsonprefix reads the JSON bodies of an agent's model calls at a
// cost that follows what is new in them, not their size.
//
// An agent sends its whole conversation on every call, serialised the same
// way, so a call's message array starts with the bytes of the last call's.
// The package holds the four pieces that use this:
//
//   - ParseObject reads an object's top-level members in one validating
//     pass, as slices of the body (Object, Member): the members a caller
//     does not change go on byte for byte.
//   - ParseRequest reads an object as ParseObject does, but only delimits
//     the member holding the conversation; with a known prefix it delimits
//     only the bytes after it. ValidArray validates an array whose known
//     prefix was validated already.
//   - Prefixes remembers recent conversation arrays (ArrayPrefix: an array
//     without its closing bracket), found by the hash of their first
//     OpeningBytes bytes and matched by the hash of all of them; each keeps
//     its hash's state, so the next, longer prefix is hashed on from it.
//   - Arriving does Prefixes.Match while a body is read, hashing each part
//     as it comes in, so that little is left after the body's last byte.
//
// The contract: what ParseRequest returns, with any known prefix or none,
// is what ParseObject returns for a valid body (a member's value its exact
// bytes), and a body ParseObject refuses is refused, except that the
// conversation array is not validated: the caller must decode or validate
// every byte of it that is not a known prefix (ValidArray, or a decoder).
// A prefix is known only when its hash matches the bytes: a body that
// differs in any byte of it is delimited whole. What Arriving finds is what
// Match finds on the whole body. Nothing here knows of sessions or of any
// provider's format.
//
// What it buys, measured with the benchmarks in this package (2-core
// machine, load about 8; a Chat Completions body of 1,000 tool-call turns,
// about 0.9 MB): delimiting reads it 5.5 times faster than validating
// (BenchmarkParseObject, 567 against 103 MB/s); the next call's body with
// the last call's array known is read 9.5 times faster than delimited
// whole (BenchmarkKnownPrefix known against none, 154 µs against 1.47 ms);
// with the hash taken while the body arrives, 7.6 µs are left after its
// last byte (arriving).
package jsonprefix
