package engine

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/hashicorp/hcl/v2"

	"github.com/ctxhost/ctxhost/config"
	"github.com/ctxhost/ctxhost/sdk"
	"github.com/ctxhost/ctxhost/sdk/assembly"
)

// TestPricingOverridesTheAssemblerDefault: a model's pricing block
// replaces only the attributes it sets.
func TestPricingOverridesTheAssemblerDefault(t *testing.T) {
	set := func(attrs ...string) config.Source {
		src := config.Source{AttrRanges: map[string]hcl.Range{}}
		for _, a := range attrs {
			src.AttrRanges[a] = hcl.Range{}
		}
		return src
	}
	got := pricing(&config.Pricing{Source: set("cache_read"), CacheRead: 0.5}, &assembly.AnthropicPricing)
	want := assembly.AnthropicPricing
	want.CacheRead = 0.5
	if diff := cmp.Diff(&want, got); diff != "" {
		t.Errorf("with a default (-want +got):\n%s", diff)
	}
	got = pricing(&config.Pricing{Source: set("cache_read", "min_cacheable"), CacheRead: 0.2, MinCacheable: 2048}, nil)
	if diff := cmp.Diff(&sdk.Pricing{Input: 1, CacheRead: 0.2, MinCacheable: 2048}, got); diff != "" {
		t.Errorf("without a default (-want +got):\n%s", diff)
	}
}
