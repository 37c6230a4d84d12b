package tokenizer

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/ctxhost/ctxhost/internal/shareddata"
)

// sharedData returns the reference data directory (../shared/data).
func sharedData(t testing.TB) string {
	t.Helper()
	return shareddata.Require(t)
}

type vector struct {
	Encoding  string `json:"encoding"`
	Text      string `json:"text"`
	Count     int    `json:"count"`
	IDs       []int  `json:"ids"`
	IDsSHA256 string `json:"ids_sha256"`
}

// idsHash is how vectors.json hashes ids: sha256 of the comma-joined ids.
func idsHash(ids []int) string {
	parts := make([]string, len(ids))
	for i, id := range ids {
		parts[i] = strconv.Itoa(id)
	}
	sum := sha256.Sum256([]byte(strings.Join(parts, ",")))
	return hex.EncodeToString(sum[:])
}

func loadVectors(t *testing.T) []vector {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join(sharedData(t), "tokenizer", "vectors.json"))
	if err != nil {
		t.Fatal(err)
	}
	var vs []vector
	if err := json.Unmarshal(raw, &vs); err != nil {
		t.Fatal(err)
	}
	if len(vs) == 0 {
		t.Fatal("no vectors")
	}
	return vs
}

func TestIDsHashMatchesVectorsWithIDs(t *testing.T) {
	for _, v := range loadVectors(t) {
		if v.IDs != nil && idsHash(v.IDs) != v.IDsSHA256 {
			t.Fatalf("hash scheme wrong for %q", v.Text)
		}
	}
}

func TestVectors(t *testing.T) {
	for i, v := range loadVectors(t) {
		c, err := Get(v.Encoding)
		if err != nil {
			t.Fatal(err)
		}
		ids := c.Encode(v.Text)
		if got := c.Count(v.Text); got != v.Count {
			t.Errorf("vector %d %s %.40q: count %d, want %d", i, v.Encoding, v.Text, got, v.Count)
		}
		if v.IDs != nil {
			if diff := cmp.Diff(v.IDs, ids); diff != "" {
				t.Errorf("vector %d %s %.40q: ids (-want +got):\n%s", i, v.Encoding, v.Text, diff)
			}
		}
		if got := idsHash(ids); got != v.IDsSHA256 {
			t.Errorf("vector %d %s %.40q: ids hash %s, want %s", i, v.Encoding, v.Text, got, v.IDsSHA256)
		}
	}
}

func TestGet(t *testing.T) {
	for _, name := range Encodings() {
		c, err := Get(name)
		if err != nil {
			t.Fatalf("Get(%q): %v", name, err)
		}
		if c.Name() != name {
			t.Errorf("Get(%q).Name() = %q", name, c.Name())
		}
		again, _ := Get(name)
		if again != c {
			t.Errorf("Get(%q) built a second counter", name)
		}
	}
	if _, err := Get("p50k_base"); err == nil || !strings.Contains(err.Error(), "p50k_base") {
		t.Errorf("Get(p50k_base) error = %v, want one naming the encoding", err)
	}
}

func TestApproximate(t *testing.T) {
	c, _ := Get(Approximate)
	for _, tc := range []struct {
		text string
		want int
	}{{"", 0}, {"a", 1}, {"abcd", 1}, {"abcde", 2}, {"日本語の", 1}, {"日本語の文", 2}} {
		if got := c.Count(tc.text); got != tc.want {
			t.Errorf("Count(%q) = %d, want %d", tc.text, got, tc.want)
		}
	}
	if c.Encode("abc") != nil {
		t.Error("approximate Encode should be nil")
	}
}

func TestSpecialTokens(t *testing.T) {
	c, _ := Get(CL100kBase)
	for _, tc := range []struct {
		text string
		want []int
	}{
		{"<|endoftext|>", []int{100257}},
		{"<|endoftext|><|endofprompt|>", []int{100257, 100276}},
		{"<|fim_prefix|>a<|fim_suffix|>", append(append([]int{100258}, c.Encode("a")...), 100260)},
		{"<|endoftext", []int{27, 91, 8862, 728, 428}}, // not special: ordinary text
	} {
		if diff := cmp.Diff(tc.want, c.Encode(tc.text)); diff != "" {
			t.Errorf("Encode(%q) (-want +got):\n%s", tc.text, diff)
		}
	}
	// Many special tokens: linear scan, correct count.
	text := strings.Repeat("x<|endoftext|>", 10000)
	if got := c.Count(text); got != 20000 {
		t.Errorf("Count(10000 × x<|endoftext|>) = %d, want 20000", got)
	}
}

func TestConcurrentUse(t *testing.T) {
	texts := []string{"hello world", "def f(x):\n    return x**2\n", strings.Repeat("=", 3000), "<|endoftext|> done"}
	want := map[string][]int{}
	for _, enc := range []string{CL100kBase, O200kBase} {
		c, _ := Get(enc)
		for _, s := range texts {
			want[enc+s] = c.Encode(s)
		}
	}
	var wg sync.WaitGroup
	for g := 0; g < 8; g++ {
		wg.Add(1)
		go func(g int) {
			defer wg.Done()
			for i := 0; i < 20; i++ {
				enc := Encodings()[(g+i)%2]
				c, err := Get(enc)
				if err != nil {
					t.Error(err)
					return
				}
				s := texts[(g*7+i)%len(texts)]
				if diff := cmp.Diff(want[enc+s], c.Encode(s)); diff != "" {
					t.Errorf("%s %.20q concurrent encode differs:\n%s", enc, s, diff)
				}
			}
		}(g)
	}
	wg.Wait()
}
