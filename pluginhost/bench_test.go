package pluginhost_test

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"

	"github.com/ctxhost/ctxhost/pluginhost"
	"github.com/ctxhost/ctxhost/sdk"
)

// BenchmarkRoundTripEmpty is the floor: a Prepared notification with an
// empty budget to a plugin that ignores it.
func BenchmarkRoundTripEmpty(b *testing.B) {
	p := benchPlugin(b, 0)
	ctx := context.Background()
	for b.Loop() {
		if err := p.Prepared(ctx, "s", sdk.Budget{}); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkComponent1KB(b *testing.B)   { benchComponent(b, 1<<10) }
func BenchmarkComponent100KB(b *testing.B) { benchComponent(b, 100<<10) }

func benchComponent(b *testing.B, size int) {
	p := benchPlugin(b, size)
	ctx := context.Background()
	b.SetBytes(int64(size))
	for b.Loop() {
		if _, err := p.Component(ctx, "s", "cl100k_base"); err != nil {
			b.Fatal(err)
		}
	}
}

func benchPlugin(b *testing.B, size int) *pluginhost.ContextClient {
	c, err := pluginhost.Launch(context.Background(), spec("bench"))
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(c.Kill)
	args, _ := json.Marshal(map[string]int{"size": size})
	if _, err := c.Context.Apply(context.Background(), "s", "set", args); err != nil {
		b.Fatal(err)
	}
	return c.Context
}

func BenchmarkLaunch(b *testing.B) {
	for _, n := range []int{1, 4} {
		for _, mtls := range []bool{false, true} {
			b.Run(fmt.Sprintf("plugins=%d/mtls=%v", n, mtls), func(b *testing.B) {
				specs := make([]pluginhost.Spec, n)
				for i := range specs {
					specs[i] = spec(fmt.Sprint("p", i))
					specs[i].NoAutoMTLS = !mtls
				}
				for b.Loop() {
					cs, err := pluginhost.LaunchAll(context.Background(), specs)
					if err != nil {
						b.Fatal(err)
					}
					for _, c := range cs {
						c.Kill()
					}
				}
			})
		}
	}
}
