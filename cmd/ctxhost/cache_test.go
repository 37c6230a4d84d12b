package main

import (
	"strings"
	"testing"

	"github.com/ctxhost/ctxhost/engine"
	"github.com/ctxhost/ctxhost/sdk"
)

// TestPrintCache: the cache line says why a shared prefix is not read
// (under the provider's minimum) and groups thousands in units too.
func TestPrintCache(t *testing.T) {
	p := sdk.Pricing{Input: 1, CacheRead: 0.1, MinCacheable: 1024, Granularity: 128}
	for _, tc := range []struct {
		total, shared int
		want, not     string
	}{
		{675, 168, "168 of 675 tok shared (below the provider's 1,024-token minimum); read 0", ""},
		{1551, 1272, "1,272 of 1,551 tok shared; read 1,152", "minimum"},
		{4000, 0, "0 of 4,000 tok shared; read 0, write 0, uncached 4,000: 4,000 units (unmanaged 4,000)", "minimum"},
	} {
		var b strings.Builder
		printCache(&b, &engine.CacheReport{Pricing: p, PrefixKept: tc.shared > 0, Managed: p.Cost(tc.total, tc.shared), Unmanaged: p.Cost(tc.total, 0)})
		if !strings.Contains(b.String(), tc.want) || (tc.not != "" && strings.Contains(b.String(), tc.not)) {
			t.Errorf("cache line %q: want %q, without %q", b.String(), tc.want, tc.not)
		}
	}
}
