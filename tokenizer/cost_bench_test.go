package tokenizer

import (
	"encoding/base64"
	"math/rand/v2"
	"strings"
	"testing"
	"time"
)

// costKinds are the inputs of BenchmarkCost: pathological texts with no
// pre-token break (or few) beside ordinary text of the same size.
func costKinds(b *testing.B, n int) (ordinary string, pathological map[string]string) {
	r := rand.New(rand.NewPCG(7, 7))
	raw := make([]byte, n*3/4+3)
	for i := range raw {
		raw[i] = byte(r.Uint32())
	}
	return repeatText(b, n), map[string]string{
		"letter": strings.Repeat("a", n),
		"base64": base64.StdEncoding.EncodeToString(raw)[:n],
		"word":   strings.Repeat("token", n/5+1)[:n],
	}
}

// BenchmarkCost times a Count, and a cut to a fixed target (Prefix then
// Suffix of what is left, as history cuts a message), of each pathological
// kind and of ordinary text of the same size in the same loop, and reports
// the pathological kind's MB/s and its cost over ordinary text's
// (x-ordinary: 1 is the same cost per byte).
//
//	go test ./tokenizer -run '^$' -bench BenchmarkCost -benchtime 3x
func BenchmarkCost(b *testing.B) {
	c, err := Get(CL100kBase)
	if err != nil {
		b.Fatal(err)
	}
	c.Count(strings.Repeat("a", 2*scanMergeMax)) // the long pre-token tables are built on first use
	const target = 8192
	ops := map[string]func(string){
		"count": func(s string) { c.Count(s) },
		"cut": func(s string) {
			end, _ := Prefix(c, s, target*2/3)
			Suffix(c, s[end:], target-target*2/3)
		},
	}
	for _, size := range []struct {
		name string
		n    int
	}{{"10KB", 10 << 10}, {"1MB", 1 << 20}, {"10MB", 10 << 20}} {
		ordinary, kinds := costKinds(b, size.n)
		for _, op := range []string{"count", "cut"} {
			fn := ops[op]
			for _, kind := range []string{"letter", "base64", "word"} {
				text := kinds[kind]
				b.Run(op+"/"+size.name+"/"+kind, func(b *testing.B) {
					var path, ord time.Duration
					for b.Loop() {
						t0 := time.Now()
						fn(text)
						t1 := time.Now()
						fn(ordinary)
						path, ord = path+t1.Sub(t0), ord+time.Since(t1)
					}
					b.ReportMetric(float64(len(text))*float64(b.N)/path.Seconds()/1e6, "MB/s")
					b.ReportMetric(float64(len(ordinary))*float64(b.N)/ord.Seconds()/1e6, "ordinary-MB/s")
					b.ReportMetric(path.Seconds()/ord.Seconds(), "x-ordinary")
				})
			}
		}
	}
}
