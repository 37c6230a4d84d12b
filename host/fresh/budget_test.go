package fresh

import (
	"strings"
	"testing"

	"github.com/ctxhost/ctxhost/sdk"
	"github.com/google/go-cmp/cmp"
)

// words counts whitespace-separated words: a tokenizer whose figures a
// test can work out by hand.
type words struct{}

func (words) Name() string             { return "words" }
func (words) Count(text string) int    { return len(strings.Fields(text)) }
func (words) Encode(text string) []int { return nil }

// lines is a text of n lines of five words.
func lines(n int) string {
	out := make([]string, n)
	for i := range out {
		out[i] = "a b c d e"
	}
	return strings.Join(out, "\n")
}

func text(name, t string) sdk.Component { return sdk.Component{Name: name, Text: t} }

// fixed100 leaves a dynamic budget of exactly 100 when total is 130.
var fixed100 = Fixed{SystemPrompt: 10, TaskSpec: 10, Reserved: 10}

// got is an allocation reduced to what the table compares.
type got struct {
	Name                    string
	Allocated, Used, Demand int
	Items, Kept             int
}

func TestAllocate(t *testing.T) {
	tests := []struct {
		name       string
		total      int
		shares     map[string]float64
		comps      []sdk.Component
		want       []got
		wantUnused int
	}{
		{
			name: "everything fits", total: 130,
			comps: []sdk.Component{text("tool_outputs", lines(2)), text("plan", lines(1)), text("memory", "x y z")},
			want:  []got{{"tool_outputs", 10, 10, 10, 2, 2}, {"plan", 5, 5, 5, 1, 1}, {"memory", 3, 3, 3, 1, 1}}, wantUnused: 82,
		},
		{
			name: "default shares 60/25/15 when all are over", total: 130,
			comps: []sdk.Component{text("tool_outputs", lines(40)), text("plan", lines(40)), text("memory", lines(40))},
			want:  []got{{"tool_outputs", 60, 60, 200, 40, 12}, {"plan", 25, 25, 200, 40, 5}, {"memory", 15, 15, 200, 40, 3}},
		},
		{
			name: "unused allocation handed to the others", total: 130,
			comps: []sdk.Component{text("tool_outputs", lines(40)), text("plan", lines(40)), text("memory", lines(1))},
			// memory takes 5 of its 15; 95 left: tool_outputs 67 (13 lines,
			// 65), plan 27 (5 lines, 25); the 5 left go to tool_outputs.
			want: []got{{"tool_outputs", 70, 70, 200, 40, 14}, {"plan", 27, 25, 200, 40, 5}, {"memory", 5, 5, 5, 1, 1}},
		},
		{
			name: "one component over takes the whole pool", total: 130,
			comps: []sdk.Component{text("plan", lines(40)), text("memory", "")},
			want:  []got{{"plan", 100, 100, 200, 40, 20}, {"memory", 0, 0, 0, 0, 0}}, wantUnused: 0,
		},
		{
			name: "zero budget empties every component", total: 30,
			comps: []sdk.Component{text("tool_outputs", lines(2)), {Name: "memory", Messages: []sdk.Message{{Role: "user", Content: "hi"}}}},
			want:  []got{{"tool_outputs", 0, 0, 10, 2, 0}, {"memory", 0, 0, 2, 1, 0}},
		},
		{
			name: "budget below the fixed part is zero too", total: 5,
			comps: []sdk.Component{text("plan", "x")},
			want:  []got{{"plan", 0, 0, 1, 1, 0}},
		},
		{
			name: "component without a share gets the leftovers", total: 130,
			comps: []sdk.Component{text("plan", lines(4)), text("repo_map", lines(40))},
			want:  []got{{"plan", 20, 20, 20, 4, 4}, {"repo_map", 80, 80, 200, 40, 16}},
		},
		{
			name: "unshared components share equally", total: 130, shares: map[string]float64{},
			comps: []sdk.Component{text("a", lines(40)), text("b", lines(40))},
			want:  []got{{"a", 50, 50, 200, 40, 10}, {"b", 50, 50, 200, 40, 10}},
		},
		{
			name: "shares are relative weights", total: 130, shares: map[string]float64{"a": 3, "b": 1},
			comps: []sdk.Component{text("a", lines(40)), text("b", lines(40))},
			want:  []got{{"a", 75, 75, 200, 40, 15}, {"b", 25, 25, 200, 40, 5}},
		},
		{
			name: "never cut mid-item: a block bigger than its allocation is dropped", total: 130, shares: map[string]float64{"a": 1},
			comps: []sdk.Component{text("a", lines(30)+"\n\nshort block")},
			want:  []got{{"a", 100, 0, 152, 2, 0}}, wantUnused: 100,
		},
		{
			name: "messages keep the newest whole messages", total: 130, shares: map[string]float64{"h": 1},
			comps: []sdk.Component{{Name: "h", Messages: []sdk.Message{
				{Role: "user", Content: lines(12)}, {Role: "assistant", Content: lines(10)}, {Role: "user", Content: lines(8)},
			}}},
			// 61, 51 and 41 tokens: the newest two (92) fit in 100.
			want: []got{{"h", 100, 92, 153, 3, 2}}, wantUnused: 8,
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			b, err := NewTokenBudgeter(fixed100, tc.shares, words{})
			if err != nil {
				t.Fatal(err)
			}
			a, cut := b.Allocate(tc.total, tc.comps)
			var gots []got
			for i, c := range a.Components {
				gots = append(gots, got{c.Name, c.Allocated, c.Used, c.Demand, c.Items, c.Kept})
				if n := sdk.CountComponent(words{}, &cut[i]); n != c.Used {
					t.Errorf("%s: cut component has %d tokens, allocation says %d", c.Name, n, c.Used)
				}
				if c.Used > c.Allocated {
					t.Errorf("%s: used %d over allocated %d", c.Name, c.Used, c.Allocated)
				}
			}
			if diff := cmp.Diff(tc.want, gots); diff != "" {
				t.Errorf("allocation (-want +got):\n%s", diff)
			}
			if a.Unused != tc.wantUnused {
				t.Errorf("unused = %d, want %d", a.Unused, tc.wantUnused)
			}
			if a.Dynamic != max(tc.total-fixed100.Sum(), 0) {
				t.Errorf("dynamic = %d", a.Dynamic)
			}
		})
	}
}

func TestCutKeepsWholeItems(t *testing.T) {
	b, _ := NewTokenBudgeter(fixed100, nil, words{})
	tests := []struct {
		name  string
		text  string
		limit int
		want  string
	}{
		{"blocks", "a b\n\nc d\ne\n\nf g h", 5, "a b\n\nc d\ne"},
		{"lines when there is one block", "a b\nc d\ne f", 4, "a b\nc d"},
		{"whole text fits", "a b c", 3, "a b c"},
		{"nothing fits", "a b c", 2, ""},
		{"zero limit", "a", 0, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c, _, n := b.CutTo(sdk.Component{Name: "x", Text: tc.text}, tc.limit)
			if c.Text != tc.want || n > tc.limit {
				t.Errorf("CutTo = %q (%d tokens), want %q", c.Text, n, tc.want)
			}
		})
	}
}

func TestItems(t *testing.T) {
	tests := []struct {
		text    string
		want    []string
		wantSep string
	}{
		{"", nil, ""},
		{"one", []string{"one"}, "\n"},
		{"a\nb", []string{"a", "b"}, "\n"},
		{"a\nb\n\nc", []string{"a\nb", "c"}, "\n\n"},
	}
	for _, tc := range tests {
		items, sep := Items(tc.text)
		if diff := cmp.Diff(tc.want, items); diff != "" || sep != tc.wantSep {
			t.Errorf("Items(%q) sep %q, diff:\n%s", tc.text, sep, diff)
		}
	}
}

func TestNewTokenBudgeterInvalid(t *testing.T) {
	if _, err := NewTokenBudgeter(Fixed{Reserved: -1}, nil, words{}); err == nil {
		t.Error("negative fixed allocation accepted")
	}
	if _, err := NewTokenBudgeter(DefaultFixed(), map[string]float64{"plan": -0.1}, words{}); err == nil {
		t.Error("negative share accepted")
	}
}

func TestDefaultFixedDynamic(t *testing.T) {
	// Of 150000 tokens, 19000 here are fixed (the repo map and the
	// codebase docs are plugin components, not fixed parts).
	b, _ := NewTokenBudgeter(DefaultFixed(), nil, words{})
	a, _ := b.Allocate(DefaultMaxTokens, nil)
	if a.Fixed != 19000 || a.Dynamic != 131000 {
		t.Errorf("fixed %d, dynamic %d", a.Fixed, a.Dynamic)
	}
}
