package facts

import (
	"fmt"
	"strings"
	"testing"

	"github.com/ctxhost/ctxhost/sdk"
)

// benchOutput is a JSON tool output of about 8 KB: a list of orders.
func benchOutput() string {
	var b strings.Builder
	b.WriteString(`{"user_id":"mia_li_3668","orders":[`)
	for i := range 40 {
		if i > 0 {
			b.WriteString(",")
		}
		fmt.Fprintf(&b, `{"order_id":"#W%07d","status":"delivered","total":%d.%02d,"created_at":"2024-05-%02dT10:00:00","items":[{"item_id":"%010d","name":"Water Bottle","price":%d.99}]}`,
			2378156+i*7, 100+i, i, 1+i%28, 6469567736+i, 20+i)
	}
	b.WriteString(`]}`)
	return b.String()
}

// benchProse is about 8 KB of an agent's prose and command output.
func benchProse() string {
	line := "Running pytest tests/test_fields.py::TestTimeDelta in src/marshmallow/fields.py at commit 3ea751c0, 3 passed in 0.12s; see https://github.com/marshmallow-code/marshmallow/issues/1867\n"
	return strings.Repeat(line, 8192/len(line)+1)
}

func BenchmarkExtract(b *testing.B) {
	for _, bc := range []struct{ name, text string }{{"json-8k", benchOutput()}, {"prose-8k", benchProse()}} {
		b.Run(bc.name, func(b *testing.B) {
			b.SetBytes(int64(len(bc.text)))
			b.ReportAllocs()
			for b.Loop() {
				Extract(bc.text)
			}
		})
	}
}

// BenchmarkCacheHit is what a message costs once its facts are known:
// the ratio to BenchmarkExtract is what the cache saves each turn.
func BenchmarkCacheHit(b *testing.B) {
	var c Cache
	m := sdk.Message{Role: sdk.RoleTool, Content: benchOutput()}
	load := func() sdk.Message { return m }
	c.Of("m1", len(m.Content), load)
	b.ReportAllocs()
	for b.Loop() {
		c.Of("m1", len(m.Content), load)
	}
}

func BenchmarkRender(b *testing.B) {
	var sources []Source
	for i := range 50 {
		sources = append(sources, Source{ID: fmt.Sprintf("m%d", i), Facts: Extract(benchOutput()[i*100 : i*100+1500])})
	}
	count := func(s string) int { return len(s) / 4 }
	b.ReportAllocs()
	for b.Loop() {
		Render(sources, nil, count, 400)
	}
}
