package tokenizer

import "strings"

// encodingSpec is what defines a BPE encoding: its merge ranks (a rank file
// embedded by tiktoken-go-loader), its pre-tokenizer and its special tokens.
// The patterns and special token ids are those of openai/tiktoken
// (tiktoken_ext/openai_public.py), as pkoukk/tiktoken-go v0.1.8 carries them;
// next is the hand-written pre-tokenizer equivalent to pattern (the tests
// hold it to the pattern).
type encodingSpec struct {
	rankFile string
	pattern  string
	next     func(s string, i int) int
	special  map[string]int
}

const rankFileBase = "https://openaipublic.blob.core.windows.net/encodings/"

var specs = map[string]encodingSpec{
	CL100kBase: {
		rankFile: rankFileBase + "cl100k_base.tiktoken",
		next:     nextCL100k,
		pattern:  `(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+`,
		special: map[string]int{
			"<|endoftext|>":   100257,
			"<|fim_prefix|>":  100258,
			"<|fim_middle|>":  100259,
			"<|fim_suffix|>":  100260,
			"<|endofprompt|>": 100276,
		},
	},
	O200kBase: {
		rankFile: rankFileBase + "o200k_base.tiktoken",
		next:     nextO200k,
		pattern: strings.Join([]string{
			`[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+(?i:'s|'t|'re|'ve|'m|'ll|'d)?`,
			`[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*(?i:'s|'t|'re|'ve|'m|'ll|'d)?`,
			`\p{N}{1,3}`,
			` ?[^\s\p{L}\p{N}]+[\r\n/]*`,
			`\s*[\r\n]+`,
			`\s+(?!\S)`,
			`\s+`,
		}, "|"),
		special: map[string]int{
			"<|endoftext|>":   199999,
			"<|endofprompt|>": 200018,
		},
	},
}
