package main

import (
	"flag"
	"fmt"
	"regexp"
)

// summarizerModel is the model the stand-in answers as a summarizer
// (internal/standin's SummarizerModel).
const summarizerModel = "standin-summarizer"

// summaryOptions are the -summaries flags: ctxhost's contexts summarize
// what their window omits with the stand-in's deterministic summarizer
// (the model standin-summarizer: a digest of the span's identifiers),
// every turn that must compact waiting for the summary being made, so
// that the figures do not depend on how fast the summaries come back.
type summaryOptions struct {
	on        bool
	maxTokens int
	outputs   int // summarize's tool_output_tokens (0: none)
}

// addSummaryFlags defines the -summaries flags on fs.
func addSummaryFlags(fs *flag.FlagSet) *summaryOptions {
	o := &summaryOptions{}
	fs.BoolVar(&o.on, "summaries", false, "ctxhost's contexts summarize what the window omits, with the stand-in's deterministic summarizer (compare with a run without)")
	fs.IntVar(&o.maxTokens, "summary-tokens", 512, "with -summaries, the most a summary may count")
	fs.IntVar(&o.outputs, "summary-outputs", 0, "with -summaries, a tool output of at least this many tokens is summarized too, and shown as its summary once masked (0: none)")
	return o
}

// summaries is what -summaries asks for (the zero value: summaries off).
func (o *summaryOptions) summaries() (summarySetup, error) {
	if !o.on {
		return summarySetup{}, nil
	}
	if o.maxTokens < 16 {
		return summarySetup{}, fmt.Errorf("-summary-tokens: %d is under 16", o.maxTokens)
	}
	if o.outputs != 0 && o.outputs < 64 {
		return summarySetup{}, fmt.Errorf("-summary-outputs: %d is under 64", o.outputs)
	}
	return summarySetup{maxTokens: o.maxTokens, outputs: o.outputs}, nil
}

// summarySetup is how ctxhost summarizes in an evaluation: summaries of
// at most maxTokens (0: summaries off), and the tool outputs of at least
// outputs tokens (0: none).
type summarySetup struct{ maxTokens, outputs int }

// contextOpen is the first line of a context block of the configuration.
var contextOpen = regexp.MustCompile(`(?m)^context "[^"]+" \{[ \t]*\n`)

// withSummaries adds to a serve configuration's text a summarizer
// answered by the stand-in at url (the caller's key, which the stand-in
// checks) and a summarize block naming it, wait = "critical", in every
// context block. Summaries off leave the configuration as it is.
func withSummaries(hcl, url string, sum summarySetup) (string, error) {
	if sum.maxTokens == 0 {
		return hcl, nil
	}
	if !contextOpen.MatchString(hcl) {
		return "", fmt.Errorf("-summaries: the configuration has no context block")
	}
	block := "  summarize {\n    summarizer   = \"conveval\"\n    wait         = \"critical\"\n    wait_timeout = \"60s\"\n"
	if sum.outputs > 0 {
		block += fmt.Sprintf("    tool_output_tokens = %d\n", sum.outputs)
	}
	block += "  }\n"
	hcl = contextOpen.ReplaceAllStringFunc(hcl, func(open string) string { return open + block })
	return hcl + fmt.Sprintf(`
summarizer "conveval" {
  kind       = "openai"
  base_url   = %q
  model      = %q
  max_tokens = %d
  caller_key = true
}
`, url, summarizerModel, sum.maxTokens), nil
}
