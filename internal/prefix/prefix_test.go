package prefix

import (
	"bytes"
	"testing"
)

func TestCommon(t *testing.T) {
	long := bytes.Repeat([]byte("abcdefgh"), 2000)
	changed := bytes.Clone(long)
	changed[9000] = 'X'
	for _, tc := range []struct {
		a, b []byte
		want int
	}{
		{nil, []byte("x"), 0},
		{[]byte("abc"), []byte("abd"), 2},
		{[]byte("abc"), []byte("abcdef"), 3},
		{long, long, len(long)},
		{long, changed, 9000},
		{long, append(bytes.Clone(long), 'z'), len(long)},
	} {
		if got := Common(tc.a, tc.b); got != tc.want {
			t.Errorf("Common(%d bytes, %d bytes) = %d, want %d", len(tc.a), len(tc.b), got, tc.want)
		}
	}
}

// TestCommon2 agrees with Common on the joined sequences, wherever they
// are split.
func TestCommon2(t *testing.T) {
	a := bytes.Repeat([]byte("0123456789"), 1000)
	b := bytes.Clone(a)
	b[7777] = '#'
	for _, cut := range [][2]int{{0, 0}, {1, 9999}, {5000, 4096}, {7777, 7778}, {10000, 0}, {3, 3}} {
		for _, other := range [][]byte{a, b, a[:5000], append(bytes.Clone(a), '!')} {
			want := Common(a, other)
			ca, cb := min(cut[0], len(a)), min(cut[1], len(other))
			if got := Common2(a[:ca], a[ca:], other[:cb], other[cb:]); got != want {
				t.Errorf("Common2 split at %v of %d and %d bytes = %d, want %d", cut, len(a), len(other), got, want)
			}
		}
	}
}

func TestCommon2Cases(t *testing.T) {
	for _, tc := range []struct {
		a0, a1, b0, b1 string
		want           int
	}{
		{"", "", "", "x", 0},
		{"ab", "cd", "abc", "d", 4},
		{"ab", "cd", "abc", "e", 3},
		{"", "abcd", "ab", "cx", 3},
		{"abcd", "", "", "abcdef", 4},
		{"a", "b", "a", "", 1},
	} {
		if got := Common2([]byte(tc.a0), []byte(tc.a1), []byte(tc.b0), []byte(tc.b1)); got != tc.want {
			t.Errorf("Common2(%q+%q, %q+%q) = %d, want %d", tc.a0, tc.a1, tc.b0, tc.b1, got, tc.want)
		}
	}
}
