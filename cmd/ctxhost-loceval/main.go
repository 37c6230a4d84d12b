// Command ctxhost-loceval measures file-level localisation of the code
// context (repository map and code search) on real repositories checked
// out locally: given only a task's text, is a file the real change touched
// among the context's first five files (Hit@5), and what share of the
// touched files does the context name at all (recall)? Plain BM25 over
// whole files is measured on the same tasks as the baseline. It also
// times indexing, re-indexing one changed file and rendering the map.
//
// It is run by hand against local git clones; it never reaches the
// network:
//
//	ctxhost-loceval tasks -repo CLONE -n 30 > tasks.jsonl   # bug-fix commits
//	ctxhost-loceval issue -repo CLONE -commit SHA -text ISSUE.txt >> tasks.jsonl
//	ctxhost-loceval run -repo CLONE -tasks tasks.jsonl      # the table
//	ctxhost-loceval eval -repos REPOS.txt                   # tuning and held-out tables
//	ctxhost-loceval index -repo CLONE                       # index figures
//
// eval's list names each repository, its language, its split (tuning or
// held-out), its clone and its tasks, one a line; it reports each
// repository, each language of a split and each split.
//
// A task is one JSON line: {"repo", "commit", "parent", "text", "files"}.
// run checks each task's parent out in CLONE (git checkout --force and
// git clean), so CLONE must be a scratch clone.
package main

import (
	"fmt"
	"os"
)

func main() {
	if len(os.Args) < 2 {
		usage()
	}
	var err error
	switch os.Args[1] {
	case "tasks":
		err = cmdTasks(os.Args[2:])
	case "issue":
		err = cmdIssue(os.Args[2:])
	case "run":
		err = cmdRun(os.Args[2:])
	case "eval":
		err = cmdEval(os.Args[2:])
	case "index":
		err = cmdIndex(os.Args[2:])
	default:
		usage()
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "ctxhost-loceval:", err)
		os.Exit(1)
	}
}

func usage() {
	fmt.Fprintln(os.Stderr, "usage: ctxhost-loceval tasks|issue|run|eval|index -repo CLONE [flags] (see the package doc)")
	os.Exit(2)
}
