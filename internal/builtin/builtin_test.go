package builtin

import (
	"slices"
	"strings"
	"testing"
)

func TestSet(t *testing.T) {
	s := Set[int]{"two": func() int { return 2 }, "one": func() int { return 1 }}
	if got := s.Names(); !slices.Equal(got, []string{"one", "two"}) {
		t.Fatalf("Names() = %v", got)
	}
	if v, err := s.New("number", "two"); err != nil || v != 2 {
		t.Fatalf("New(two) = %d, %v", v, err)
	}
	if _, err := s.New("number", "three"); err == nil || !strings.Contains(err.Error(), `no built-in number "three" (there are one, two)`) {
		t.Fatalf("New(three) error = %v", err)
	}
}
