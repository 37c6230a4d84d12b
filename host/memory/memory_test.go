package memory

import (
	"errors"
	"strings"
	"testing"
)

func words(s string) int { return len(strings.Fields(s)) }

func TestParseScope(t *testing.T) {
	for _, tc := range []struct {
		in, err string
	}{
		{"session:run-42", ""},
		{"agent:coder", ""},
		{"group:team.a", ""},
		{"team", "want session:ID"},
		{"org:x", "unknown kind"},
		{"group:", "1..128 bytes"},
		{"group:a b", "1..128 bytes"},
	} {
		sc, err := ParseScope(tc.in)
		if tc.err == "" && (err != nil || sc.String() != tc.in) {
			t.Errorf("ParseScope(%q) = %v, %v; want it back", tc.in, sc, err)
		}
		if tc.err != "" && (err == nil || !strings.Contains(err.Error(), tc.err)) {
			t.Errorf("ParseScope(%q) error %v; want one containing %q", tc.in, err, tc.err)
		}
	}
}

func TestLimit(t *testing.T) {
	b := Block{Scope: Scope{KindAgent, "coder"}, Label: "persona", Value: "héllo", Limit: 5, Unit: Chars}
	if err := b.CheckLimit(words); err != nil {
		t.Errorf("5 characters under a 5-character limit: %v", err)
	}
	b.Value += "!"
	err := b.CheckLimit(words)
	if !errors.Is(err, ErrOverLimit) || !strings.Contains(err.Error(), "limit of 5 chars") || !strings.Contains(err.Error(), "6 chars") {
		t.Errorf("6 characters over 5: %v; want ErrOverLimit naming the limit", err)
	}
	b = Block{Scope: Scope{KindAgent, "coder"}, Label: "persona", Value: "one two three", Limit: 2, Unit: Tokens}
	if err := b.CheckLimit(words); !errors.Is(err, ErrOverLimit) || !strings.Contains(err.Error(), "limit of 2 tokens") {
		t.Errorf("3 tokens over 2: %v", err)
	}
}

func TestValidate(t *testing.T) {
	ok := Block{Scope: Scope{KindGroup, "g"}, Label: "notes"}.Normalize()
	if err := ok.Validate(); err != nil || ok.Limit != DefaultLimit || ok.Unit != Chars {
		t.Fatalf("a normalized block: %+v, %v", ok, err)
	}
	for name, b := range map[string]Block{
		"label":  {Scope: ok.Scope, Label: "1abc", Limit: 1, Unit: Chars},
		"unit":   {Scope: ok.Scope, Label: "a", Limit: 1, Unit: "bytes"},
		"limit":  {Scope: ok.Scope, Label: "a", Limit: MaxLimit + 1, Unit: Chars},
		"nul":    {Scope: ok.Scope, Label: "a", Limit: 1, Unit: Chars, Value: "a\x00"},
		"utf8":   {Scope: ok.Scope, Label: "a", Limit: 1, Unit: Chars, Description: "\xff"},
		"scope":  {Scope: Scope{"org", "x"}, Label: "a", Limit: 1, Unit: Chars},
		"noname": {Scope: Scope{KindGroup, ""}, Label: "a", Limit: 1, Unit: Chars},
	} {
		if err := b.Validate(); err == nil {
			t.Errorf("%s: %+v validated", name, b)
		}
	}
}

func TestEdits(t *testing.T) {
	b := Block{Label: "notes"}.Append("one")
	b = b.Append("two")
	if b.Value != "one\ntwo" {
		t.Fatalf("Append: %q", b.Value)
	}
	r, err := b.Replace("two", "three")
	if err != nil || r.Value != "one\nthree" {
		t.Errorf("Replace: %q, %v", r.Value, err)
	}
	if _, err := b.Replace("four", "x"); err == nil {
		t.Error("Replace of absent text succeeded")
	}
	if _, err := b.Append("one").Replace("one", "x"); err == nil || !strings.Contains(err.Error(), "2 times") {
		t.Errorf("Replace of twice-present text: %v", err)
	}
}

func TestRender(t *testing.T) {
	if Render(nil, words) != "" {
		t.Error("no blocks render as text")
	}
	blocks := []Block{
		{Scope: Scope{KindGroup, "team"}, Label: "persona", Value: "group persona", Limit: 100, Unit: Chars},
		{Scope: Scope{KindAgent, "coder"}, Label: "persona", Value: "agent persona", Limit: 100, Unit: Chars, ReadOnly: true},
		{Scope: Scope{KindSession, "s1"}, Label: "human", Description: "about the user", Value: "likes Go", Limit: 10, Unit: Tokens},
	}
	got := Render(blocks, words)
	reversed := Render([]Block{blocks[2], blocks[1], blocks[0]}, words)
	if got != reversed {
		t.Errorf("the order of the blocks changed the rendering")
	}
	for _, want := range []string{Header, "<human>\n<description>\nabout the user\n</description>", "- tokens_current=2\n- tokens_limit=10",
		"agent persona", "- read_only=true", "- scope=agent:coder"} {
		if !strings.Contains(got, want) {
			t.Errorf("rendering lacks %q:\n%s", want, got)
		}
	}
	if strings.Contains(got, "group persona") {
		t.Errorf("the agent's persona does not shadow the group's:\n%s", got)
	}
	if strings.Index(got, "<human>") > strings.Index(got, "<persona>") {
		t.Errorf("blocks not sorted by label:\n%s", got)
	}
}
