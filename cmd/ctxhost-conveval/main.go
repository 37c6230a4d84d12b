// Command ctxhost-conveval measures what `ctxhost serve` keeps of
// conversations of several shapes (chat agents with tools, plain
// assistant chats, multi-agent chats, coding agents) on the call path's
// four endpoints (OpenAI Chat Completions and Responses, Anthropic
// Messages, Gemini generateContent) at several context windows, beside
// two baselines computed on the same calls: the naive trimmer (the system
// text and the most recent messages that fit, a tool call and its result
// kept together) and "drop from the start" (the oldest items dropped one
// by one until the rest fits, as OpenAI's truncation "auto"). Every call
// asks replay.AnswerTokens for its answer, which the call path reserves;
// the baselines fit the same budget, the window less that reserve.
//
// Each conversation is replayed as an agent makes its model calls: before
// each recorded assistant turn, the whole conversation so far goes to a
// ctxhost serve (the configuration given, at each window) in front of the
// provider stand-in, which answers with the recorded turn (posted to the
// stand-in before the call and named in it by reference, so that answers
// of any size travel, past the 64 KiB serve allows headers). What went
// upstream is read back from the stand-in and judged by the harness's own
// rules, independent of ctxhost's:
//
//   - fit: the request within the window, counted with tiktoken
//     (cl100k_base) on what went upstream; a request over the window
//     keeps nothing (the provider refuses it), so it counts as keeping
//     neither the current message, the task nor any fact;
//   - current: the latest user message (not a tool's output) present whole;
//   - facts: every identifier of the earlier user messages and tool outputs
//     (ids and codes, e-mail addresses, dates, numbers of four digits or
//     more, by the harness's regular expressions) present; recall is the
//     share of those identifiers present, over all calls. A numbered file
//     view (lines after consecutive line numbers, "1474:code") is one
//     fact, the file and the lines it showed, kept when its first and last
//     lines are shown or the range is named after the file's name
//     ("fields.py:1457-1556"); its line numbers are no facts of their own
//     (-facts gutters counts each, as the harness did before);
//   - task: the conversation's first user message present;
//   - masked: of the tool outputs not sent whole, the share sent as a
//     masked placeholder (the rest omitted or cut);
//   - tokens: the tokens sent, summed; cost: their price with prompt
//     caching (each endpoint's provider's prices, the prefix shared with
//     the conversation's previous call read from the cache), summed, in
//     input-token units.
//
// Every conversation belongs to the tune or the heldout split by a hash of
// its source id (sha256, even or odd), decided before its content is read;
// the table gives both side by side.
//
// Conversations are replayed -concurrency at a time at each window (by
// default GOMAXPROCS), each worker through a stand-in and a serve of its
// own; the tallies are added up in the corpus's order once all are done,
// so the table is the same at any concurrency.
//
//	ctxhost-conveval run -corpus /work/corpora/tools -corpus /work/corpora/assistant \
//	    -trajectories ../shared/data/trajectories -windows 4096,8192,16384 -concurrency 4
//
// -explain prints on stderr, for each of ctxhost's requests that left a
// fact out, which ones (-dump: and the texts it sent, beside the naive
// trimmer's).
//
// ctxhost-conveval convert builds the corpora from the public material
// docs/CONVERSATIONS.md names, read with git from clones of its
// repositories (DIR, or DIR@COMMIT for a commit other than HEAD):
//
//	ctxhost-conveval convert -out /work/corpora -tau-bench tau-bench.git \
//	    -hh-rlhf hh-rlhf.git -chatdev ChatDev.git -aider aider.git
//
// It writes a directory a shape (tools, assistant, multi-agent, aider)
// and SOURCES, the files and commits read.
//
// A corpus is a directory of .jsonl files, named for its shape; each line
// one conversation: {"id": source id, "messages": [OpenAI-style messages]}
// (role system, user, assistant or tool; assistant tool_calls; a tool
// message's tool_call_id). -trajectories reads SWE-agent .traj files, in
// two shapes: as recorded (tool calls and results) and unlabelled (each
// observation a user message).
//
// SIGINT or SIGTERM stops the stand-ins and serves the command started
// (SIGTERM, SIGKILL 30 s on or at a second signal) and removes their
// temporary directories before it exits; on Linux the kernel kills them
// too when the command is killed outright.
//
// -summaries has ctxhost's contexts summarize what their window omits,
// with the stand-in's deterministic summarizer (a digest of each
// message's identifiers), every turn that must compact waiting for its
// summary; -summary-outputs N summarizes a tool output of N tokens or
// more too. Compare the table with a run without.
package main

import (
	"fmt"
	"os"
)

func main() {
	if len(os.Args) < 2 {
		usage()
	}
	stopOnSignal()
	var err error
	switch os.Args[1] {
	case "run":
		err = cmdRun(os.Args[2:])
	case "convert":
		err = cmdConvert(os.Args[2:])
	default:
		usage()
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "ctxhost-conveval:", err)
		os.Exit(1)
	}
}

func usage() {
	fmt.Fprintln(os.Stderr, "usage: ctxhost-conveval run -corpus DIR... [-trajectories DIR] [-windows 4096,8192,16384]\n       ctxhost-conveval convert -out DIR [-tau-bench CLONE] [-hh-rlhf CLONE] [-chatdev CLONE] [-aider CLONE]\n(see the package doc)")
	os.Exit(2)
}
