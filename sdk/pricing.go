package sdk

// Pricing is a provider's price model for prompt caching, in cost units
// per input token (an uncached input token costs Input, by default 1):
// a prefix the provider has seen recently is read from its cache at
// CacheRead; with CacheWrite set, tokens not read from the cache are
// written to it at CacheWrite (Anthropic's explicit caching), otherwise
// they cost Input. A prefix is cached only from MinCacheable tokens, in
// steps of Granularity.
type Pricing struct {
	Input        float64 `json:"input"`
	CacheRead    float64 `json:"cache_read"`
	CacheWrite   float64 `json:"cache_write,omitempty"`
	MinCacheable int     `json:"min_cacheable"`
	Granularity  int     `json:"granularity,omitempty"`
}

// CacheCost is what one payload costs under a Pricing.
type CacheCost struct {
	// Total is the payload's input tokens; SharedPrefix the tokens it
	// shares as a prefix with the previous payload of the same session
	// and agent.
	Total        int `json:"total"`
	SharedPrefix int `json:"shared_prefix"`
	// Read, Write and Uncached split Total: read from the cache, written
	// to it, charged as plain input.
	Read     int     `json:"cache_read"`
	Write    int     `json:"cache_write"`
	Uncached int     `json:"uncached"`
	Cost     float64 `json:"cost_units"`
}

// Cost prices a payload of total tokens whose first shared tokens were in
// the previous payload.
func (p Pricing) Cost(total, shared int) CacheCost {
	c := CacheCost{Total: total, SharedPrefix: shared}
	if shared >= p.MinCacheable && shared > 0 {
		c.Read = shared
		if g := p.Granularity; g > 1 {
			c.Read = shared / g * g
		}
	}
	rest := total - c.Read
	if p.CacheWrite > 0 {
		c.Write = rest
	} else {
		c.Uncached = rest
	}
	c.Cost = float64(c.Read)*p.CacheRead + float64(c.Write)*p.CacheWrite + float64(c.Uncached)*p.Input
	return c
}
