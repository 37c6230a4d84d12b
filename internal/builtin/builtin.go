// Package builtin is a named set of constructors: the first-party plugins
// or assemblers a host can make in its own process by name.
package builtin

import (
	"fmt"
	"slices"
	"strings"
)

// Set maps names to constructors of T.
type Set[T any] map[string]func() T

// Names returns the set's names, sorted.
func (s Set[T]) Names() []string {
	out := make([]string, 0, len(s))
	for n := range s {
		out = append(out, n)
	}
	slices.Sort(out)
	return out
}

// New returns a new T made by the constructor named name; what names the
// kind of T in the error ("plugin", "assembler").
func (s Set[T]) New(what, name string) (T, error) {
	mk, ok := s[name]
	if !ok {
		var zero T
		return zero, fmt.Errorf("no built-in %s %q (there are %s)", what, name, strings.Join(s.Names(), ", "))
	}
	return mk(), nil
}
