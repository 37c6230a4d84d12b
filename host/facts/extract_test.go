package facts

import (
	"slices"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/ctxhost/ctxhost/sdk"
)

func values(fs []Fact) []string {
	out := make([]string, len(fs))
	for i, f := range fs {
		out[i] = f.String()
	}
	return out
}

func TestExtractProse(t *testing.T) {
	for _, tc := range []struct {
		text string
		want []string
	}{
		{"My user id is mia_li_3668 and I want to cancel reservation NO6JO3.", []string{"mia_li_3668", "NO6JO3"}},
		{"It cost $1,234.50 on 2024-05-15; refund 120.00 USD to mia.li3@example.com please.", []string{"$1,234.50", "2024-05-15", "120.00 USD", "mia.li3@example.com"}},
		{"Order #W2378156 ships to zip 94110, call 555-123-4567.", []string{"#W2378156", "94110", "555-123-4567"}},
		{"See src/marshmallow/fields.py and https://github.com/x/y/issues/12?q=1 at commit 3ea751c0.", []string{"src/marshmallow/fields.py", "https://github.com/x/y/issues/12?q=1", "3ea751c0"}},
		{"order_id=W123456 status: cancelled", []string{"order_id=W123456", "status=cancelled"}},
		{`"reservation_id": "NO6JO3", "amount": 99.5`, []string{"reservation_id=NO6JO3", "amount=99.5"}},
		{"Fly from JFK to LAX on flight HAT083.", []string{"JFK", "LAX", "HAT083"}},
	} {
		got := values(Extract(tc.text))
		for _, w := range tc.want {
			if !slices.Contains(got, w) {
				t.Errorf("Extract(%q) = %q: %q missing", tc.text, got, w)
			}
		}
	}
}

// TestExtractNoNoise: words, small numbers, sizes, times, ordinals and
// syntax are not facts.
func TestExtractNoNoise(t *testing.T) {
	for _, text := range []string{
		"Hello, I would like to change my flight please. Thanks a lot!",
		"I ran the tests 3 times in 10ms, the 2nd run took 4GB and failed at 10am.",
		"ERROR: the JSON API returned OK, see the README and TODO.",
		"Line 42 of 120: if x > 3 and y < 17 then return -1",
		"v2 of the _private __init__ helper",
	} {
		if got := Extract(text); len(got) > 0 {
			t.Errorf("Extract(%q) = %q, want no facts", text, values(got))
		}
	}
}

func TestExtractJSON(t *testing.T) {
	out := `{"reservation_id":"NO6JO3","user_id":"mia_li_3668","origin":"JFK","cabin":"economy","insurance":"no",
"flights":[{"flight_number":"HAT083","date":"2024-05-15","price":1234.5}],
"payment_history":[{"payment_id":"credit_card_4421486","amount":1234.5}],
"passengers":[{"first_name":"Mia","last_name":"Li"}],"api_token":"sk-secret-123456","note":"a long free text comment with nothing in it"}`
	fs := Extract(out)
	got := values(fs)
	for _, w := range []string{"reservation_id=NO6JO3", "user_id=mia_li_3668", "origin=JFK", "cabin=economy",
		"flight_number=HAT083", "date=2024-05-15", "price=1234.5", "payment_id=credit_card_4421486", "first_name=Mia", "last_name=Li",
		"reservation_id", "payment_history"} {
		if !slices.Contains(got, w) {
			t.Errorf("JSON facts %q: %q missing", got, w)
		}
	}
	for _, f := range fs {
		if strings.Contains(f.Value, "secret") || f.Value == "api_token" || f.Value == "no" {
			t.Errorf("JSON facts hold %q", f)
		}
	}
	// Same output, keys in another order: the same facts.
	again := Extract(`{"user_id":"mia_li_3668","reservation_id":"NO6JO3"}`)
	if g := values(again); !slices.Equal(g, []string{"reservation_id", "user_id", "reservation_id=NO6JO3", "user_id=mia_li_3668"}) {
		t.Errorf("keys out of order: %q", g)
	}
}

func TestFromMessageReadsToolCalls(t *testing.T) {
	m := sdk.Message{Role: sdk.RoleAssistant, Content: "Looking it up.",
		ToolCalls: []sdk.ToolCall{{ID: "c1", Name: "get_order", Arguments: `{"order_id":"#W2378156"}`}}}
	if got := values(FromMessage(m)); !slices.Contains(got, "order_id=#W2378156") {
		t.Errorf("FromMessage = %q", got)
	}
}

func TestExtractBounded(t *testing.T) {
	var b strings.Builder
	for i := range 2000 {
		b.WriteString("item")
		b.WriteString(strings.Repeat("x", i%5))
		b.WriteString("_")
		b.WriteString(strings.Repeat("7", 1+i%9))
		b.WriteString(" ")
		if i%100 == 0 {
			b.WriteString("user@example.com ")
		}
	}
	fs := Extract(b.String())
	if len(fs) > MaxPerMessage {
		t.Fatalf("%d facts, want at most %d", len(fs), MaxPerMessage)
	}
	if !slices.Contains(values(fs), "user@example.com") {
		t.Errorf("the e-mail address (a stronger kind, late in a long text) was not kept")
	}
}

func TestDigest(t *testing.T) {
	fs := Extract(`{"reservation_id":"NO6JO3","user_id":"mia_li_3668","status":"active","total":120.5,"items":[1,2]}`)
	d := Digest(fs, 0)
	if !strings.HasPrefix(d, " facts: ") || len(d) > DigestChars {
		t.Fatalf("digest %q", d)
	}
	for _, w := range []string{"reservation_id=NO6JO3", "user_id=mia_li_3668", "total=120.5", "status=active", "; keys "} {
		if !strings.Contains(d, w) {
			t.Errorf("digest %q: %q missing", d, w)
		}
	}
	if Digest(nil, 0) != "" {
		t.Error("a digest of no facts is not empty")
	}
	var many []Fact
	for i := range 100 {
		many = append(many, Fact{Value: strings.Repeat("A", 3) + string(rune('0'+i%10)) + strings.Repeat("9", i%7+3), Kind: KindID})
	}
	if d := Digest(many, 0); len(d) > DigestChars || len(d) < DigestChars-20 {
		t.Errorf("digest of %d characters, want up to %d", len(d), DigestChars)
	}
}

func TestRender(t *testing.T) {
	sources := []Source{
		{ID: "m2", Facts: Extract("My user id is mia_li_3668, email mia@example.com.")},
		{ID: "m4", Facts: Extract(`{"reservation_id":"NO6JO3","user_id":"mia_li_3668","price":99.5}`)},
		{ID: "m6", Facts: Extract("Refund $99.50 to card 4421486 for NO6JO3.")},
	}
	count := func(s string) int { return len(s) / 4 }
	got := Render(sources, func(v string) bool { return v == "mia@example.com" }, count, 400)
	if !strings.HasPrefix(got, Header+"\n- m6: ") {
		t.Fatalf("render:\n%s", got)
	}
	for _, w := range []string{"NO6JO3", "mia_li_3668", "$99.50", "4421486", "price=99.5"} {
		if !strings.Contains(got, w) {
			t.Errorf("render lacks %q:\n%s", w, got)
		}
	}
	if strings.Contains(got, "mia@example.com") {
		t.Errorf("a value shown elsewhere is rendered:\n%s", got)
	}
	if n := strings.Count(got, "NO6JO3"); n != 1 {
		t.Errorf("NO6JO3 rendered %d times:\n%s", n, got)
	}
	// NO6JO3 and mia_li_3668 are stated twice: within a small bound they stay.
	small := Render(sources, nil, count, count(Header)+20)
	if !strings.Contains(small, "NO6JO3") || !strings.Contains(small, "mia_li_3668") || count(small) > count(Header)+20 {
		t.Errorf("small render:\n%s", small)
	}
	if Render(sources, nil, count, 3) != "" {
		t.Error("a render within 3 tokens is not empty")
	}
	if a, b := Render(sources, nil, count, 400), Render(sources, nil, count, 400); a != b {
		t.Error("render is not deterministic")
	}
}

func TestCacheExtractsOnce(t *testing.T) {
	var c Cache
	loads := 0
	load := func() sdk.Message { loads++; return sdk.Message{Role: sdk.RoleUser, Content: "id NO6JO3"} }
	for range 3 {
		if fs := c.Of("m1", 7, load); len(fs) != 1 {
			t.Fatalf("facts %v", fs)
		}
	}
	c.Of("m1", 8, load) // changed: extracted again
	if loads != 2 || c.Len() != 2 {
		t.Errorf("loads %d, cached %d; want 2, 2", loads, c.Len())
	}
}

// FuzzExtract: any text gives valid, bounded, deterministic facts that
// the text states.
func FuzzExtract(f *testing.F) {
	for _, s := range []string{
		"My user id is mia_li_3668 and reservation NO6JO3 cost $1,234.50 on 2024-05-15.",
		`{"reservation_id":"NO6JO3","flights":[{"price":1234.5,"date":"2024-05-15"}],"x":null}`,
		"see ./a/b.py, https://example.com/x?y=1 and mia@example.com",
		`[{"a":{"b":{"c":[1,2,{"user_id":12345}]}}}]`,
		"key=value password=hunter2 #123 $-5 12.5 EUR",
		"[File: src/a.py (300 lines total)]\r\n(119 more lines above)\r\n120:x = 1\r\n121:\r\n122:y==2.0.1\n",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		fs := Extract(s)
		if len(fs) > MaxPerMessage {
			t.Fatalf("%d facts", len(fs))
		}
		seen := map[string]bool{}
		for _, x := range fs {
			if x.Value == "" || !utf8.ValidString(x.Value) || !utf8.ValidString(x.Key) {
				t.Fatalf("invalid fact %q", x)
			}
			if seen[x.Value] {
				t.Fatalf("%q twice", x.Value)
			}
			seen[x.Value] = true
			if x.Kind != KindAmount && x.Kind != KindNumber && x.Kind != KindID && x.Kind != KindView && !strings.Contains(s, x.Value) && !strings.HasPrefix(strings.TrimSpace(s), "{") && !strings.HasPrefix(strings.TrimSpace(s), "[") {
				t.Fatalf("%q is not in the text", x.Value)
			}
		}
		if d := Digest(fs, 0); len(d) > DigestChars {
			t.Fatalf("digest of %d characters", len(d))
		}
		if again := Extract(s); !slices.Equal(again, fs) {
			t.Fatalf("not deterministic")
		}
	})
}
