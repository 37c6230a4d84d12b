package fresh

import (
	"fmt"
	"sort"
	"strings"

	"github.com/ctxhost/ctxhost/sdk"
	"github.com/ctxhost/ctxhost/tokenizer"
)

// Defaults of a fresh context's budget: a window of 150,000 tokens with
// room reserved for the answer, the system prompt and the task.
const (
	DefaultMaxTokens          = 150000
	DefaultSystemPromptTokens = 2000
	DefaultTaskSpecTokens     = 1000
	DefaultReservedTokens     = 16000
	// The code context's fixed allocations, counted when a profile has
	// a repository map or codebase docs (a plugin in that role, or a
	// repository root for the fallbacks).
	DefaultRepoMapTokens      = 2000
	DefaultCodebaseDocsTokens = 3000
)

// DefaultShares split what the fixed parts leave: files 60%, code results
// 25%, memories 15% (the files are what a task most often needs whole),
// mapped to the first-party components (as config.DefaultShares).
func DefaultShares() map[string]float64 {
	return map[string]float64{"tool_outputs": 0.60, "plan": 0.25, "memory": 0.15}
}

// Fixed are the fixed allocations of a budget.
type Fixed struct {
	SystemPrompt int
	TaskSpec     int
	Reserved     int
	RepoMap      int // 0 without a repository map
	CodebaseDocs int // 0 without codebase docs
}

// DefaultFixed returns the default fixed allocations (system prompt, task
// spec, reserved for the answer).
func DefaultFixed() Fixed {
	return Fixed{SystemPrompt: DefaultSystemPromptTokens, TaskSpec: DefaultTaskSpecTokens, Reserved: DefaultReservedTokens}
}

// Sum is the total of the fixed allocations.
func (f Fixed) Sum() int {
	return f.SystemPrompt + f.TaskSpec + f.Reserved + f.RepoMap + f.CodebaseDocs
}

// TokenBudgeter splits a token budget across components.
type TokenBudgeter struct {
	fixed   Fixed
	shares  map[string]float64
	counter tokenizer.Counter
}

// NewTokenBudgeter returns a budgeter; nil shares means DefaultShares.
// Negative allocations or shares are an error.
func NewTokenBudgeter(fixed Fixed, shares map[string]float64, counter tokenizer.Counter) (*TokenBudgeter, error) {
	if fixed.SystemPrompt < 0 || fixed.TaskSpec < 0 || fixed.Reserved < 0 || fixed.RepoMap < 0 || fixed.CodebaseDocs < 0 {
		return nil, fmt.Errorf("token budgeter: negative fixed allocation %+v", fixed)
	}
	if shares == nil {
		shares = DefaultShares()
	}
	for name, w := range shares {
		if w < 0 {
			return nil, fmt.Errorf("token budgeter: share of %q is negative (%v)", name, w)
		}
	}
	return &TokenBudgeter{fixed: fixed, shares: shares, counter: counter}, nil
}

// Fixed returns the fixed allocations.
func (b *TokenBudgeter) Fixed() Fixed { return b.fixed }

// Count counts text with the budgeter's tokenizer.
func (b *TokenBudgeter) Count(text string) int { return b.counter.Count(text) }

// Allocation is how a dynamic budget was shared.
type Allocation struct {
	Total   int // the whole budget
	Fixed   int // the sum of the fixed allocations
	Dynamic int // Total - Fixed, at least 0
	Unused  int // dynamic tokens no component used
	// Components are in the order given to Allocate.
	Components []ComponentAllocation
}

// ComponentAllocation is one component's part of the dynamic budget.
type ComponentAllocation struct {
	Name      string
	Weight    float64 // the configured share (0 when none)
	Demand    int     // tokens of the whole component
	Allocated int     // tokens allocated
	Used      int     // tokens of the component as cut
	Cut
}

// Cut says how a component was cut to its allocation.
type Cut struct {
	Items int // items in the whole component
	Kept  int // items kept
}

// WasCut reports whether items were dropped.
func (c Cut) WasCut() bool { return c.Kept < c.Items }

// Allocate shares total - fixed across components (see the package doc)
// and returns the allocation and the components cut to it, in order.
func (b *TokenBudgeter) Allocate(total int, components []sdk.Component) (Allocation, []sdk.Component) {
	a := Allocation{Total: total, Fixed: b.fixed.Sum()}
	a.Dynamic = max(total-a.Fixed, 0)
	a.Components = make([]ComponentAllocation, len(components))
	for i := range components {
		a.Components[i] = ComponentAllocation{Name: components[i].Name, Weight: b.shares[components[i].Name], Demand: sdk.CountComponent(b.counter, &components[i])}
	}
	b.waterFill(a.Dynamic, a.Components)

	out := make([]sdk.Component, len(components))
	used := 0
	for i := range components {
		out[i], a.Components[i].Cut, a.Components[i].Used = b.CutTo(components[i], a.Components[i].Allocated)
		used += a.Components[i].Used
	}
	// Hand unused tokens to the cut components until nothing changes.
	order := make([]int, len(components))
	for i := range order {
		order[i] = i
	}
	sort.SliceStable(order, func(x, y int) bool { return a.Components[order[x]].Weight > a.Components[order[y]].Weight })
	for changed := true; changed; {
		changed = false
		for _, i := range order {
			c := &a.Components[i]
			left := a.Dynamic - used
			if !c.WasCut() || left <= 0 {
				continue
			}
			cut, kept, n := b.CutTo(components[i], c.Used+left)
			if n > c.Used {
				used += n - c.Used
				c.Allocated = max(c.Allocated, n)
				out[i], c.Cut, c.Used = cut, kept, n
				changed = true
			}
		}
	}
	a.Unused = a.Dynamic - used
	return a, out
}

// waterFill sets Allocated of every component (see the package doc).
func (b *TokenBudgeter) waterFill(pool int, cs []ComponentAllocation) {
	var active []int
	for i := range cs {
		if cs[i].Demand > 0 {
			active = append(active, i)
		}
	}
	for len(active) > 0 {
		weights := make([]float64, len(active))
		sum := 0.0
		for k, i := range active {
			weights[k] = cs[i].Weight
			sum += weights[k]
		}
		if sum == 0 {
			for k := range weights {
				weights[k] = 1
			}
			sum = float64(len(weights))
		}
		offer := func(k int) int { return int(float64(pool) * weights[k] / sum) }
		var rest []int
		taken := 0
		for k, i := range active {
			if cs[i].Demand <= offer(k) {
				cs[i].Allocated = cs[i].Demand
				taken += cs[i].Demand
			} else {
				rest = append(rest, i)
			}
		}
		if taken == 0 {
			for k, i := range active {
				cs[i].Allocated = offer(k)
			}
			return
		}
		pool -= taken
		active = rest
	}
}

// CutTo cuts c to at most limit tokens by whole items (see the package
// doc) and returns the cut component, what was kept and its tokens.
func (b *TokenBudgeter) CutTo(c sdk.Component, limit int) (sdk.Component, Cut, int) {
	if c.IsMessages() {
		return b.cutMessages(c, limit)
	}
	return b.cutText(c, limit)
}

// cutMessages keeps the newest whole messages that fit.
func (b *TokenBudgeter) cutMessages(c sdk.Component, limit int) (sdk.Component, Cut, int) {
	n := len(c.Messages)
	kept, tokens := 0, 0
	for i := n - 1; i >= 0; i-- {
		t := sdk.CountMessage(b.counter, c.Messages[i])
		if tokens+t > limit {
			break
		}
		tokens += t
		kept++
	}
	c.Messages = append([]sdk.Message{}, c.Messages[n-kept:]...)
	return c, Cut{Items: n, Kept: kept}, tokens
}

// Items splits text into its items: blocks separated by a blank line when
// there are at least two, else lines. It returns the separator to join
// them again.
func Items(text string) ([]string, string) {
	if text == "" {
		return nil, ""
	}
	if blocks := strings.Split(text, "\n\n"); len(blocks) > 1 {
		return blocks, "\n\n"
	}
	return strings.Split(text, "\n"), "\n"
}

// cutText keeps the leading whole items that fit: the items within the
// longest prefix that fits (tokenizer.Prefix, one pass over it), checked
// with a count of them (an item fewer while they count more, one more
// while that still fits), where a binary search on the number of items
// counted a prefix per probe.
func (b *TokenBudgeter) cutText(c sdk.Component, limit int) (sdk.Component, Cut, int) {
	items, sep := Items(c.Text)
	whole := b.counter.Count(c.Text)
	if whole <= limit {
		return c, Cut{Items: len(items), Kept: len(items)}, whole
	}
	// upTo(k) is the length of the first k items joined.
	upTo := func(k int) int {
		n := 0
		for _, it := range items[:k] {
			n += len(it) + len(sep)
		}
		return max(0, n-len(sep))
	}
	end, _ := tokenizer.Prefix(b.counter, c.Text, limit)
	k, at := 0, 0 // items[:k] end before end; at is where item k starts
	for k < len(items)-1 && at+len(items[k]) <= end {
		at += len(items[k]) + len(sep)
		k++
	}
	tokens := b.counter.Count(c.Text[:upTo(k)])
	for k > 0 && tokens > limit {
		k--
		tokens = b.counter.Count(c.Text[:upTo(k)])
	}
	for k < len(items)-1 {
		t := b.counter.Count(c.Text[:upTo(k+1)])
		if t > limit {
			break
		}
		k, tokens = k+1, t
	}
	c.Text = c.Text[:upTo(k)]
	return c, Cut{Items: len(items), Kept: k}, tokens
}
