package sdk

import "context"

// CapSummarize: the plugin implements Summarizer.
const CapSummarize = "summarize"

// Summarizer is implemented by a Session that condenses a span of a
// conversation's history into a text: the host's summarize step asks it
// ahead of need for the span the window would omit next, and shows the
// answer where the span stood (the originals stay retrievable by id). The
// host validates every answer (non-empty text within MaxTokens, as it
// counts it) and falls back to omitting the span when it is not.
type Summarizer interface {
	Summarize(ctx context.Context, req SummarizeRequest) (SummarizeResult, error)
}

// SummarizeRequest is one span to condense.
type SummarizeRequest struct {
	// Messages are the span's messages as they were added, oldest first.
	Messages []Message `json:"messages"`
	// Previous is the summary of everything before the span ("" for the
	// first): the answer replaces it, so it must keep what Previous says
	// that still matters (summaries roll).
	Previous string `json:"previous,omitempty"`
	// MaxTokens is the most the answer may count (in Encoding).
	MaxTokens int `json:"max_tokens"`
	// Encoding names the tokenizer the host counts with.
	Encoding string `json:"encoding,omitempty"`
	// Key is the API key of the call that triggered the summary, when the
	// host is in a call path and the summarizer takes the caller's key: it
	// is held in memory for the call only, never stored, logged or sent on
	// the plugin protocol.
	Key string `json:"-"`
}

// SummarizeResult is a summary and what it cost.
type SummarizeResult struct {
	Text string `json:"text"`
	// Model names what made the summary (shown in the compaction log).
	Model string `json:"model,omitempty"`
	// InputTokens and OutputTokens are what the model reported for the
	// call (0: unknown; the host then counts the request and the text).
	InputTokens  int `json:"input_tokens,omitempty"`
	OutputTokens int `json:"output_tokens,omitempty"`
}
