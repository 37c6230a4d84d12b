package main

import (
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"

	"github.com/ctxhost/ctxhost/tokenizer"
)

func cmdTokens(args []string, std stdio) error {
	fs := newFlagSet("tokens", std.err, "[FILE ...]   (stdin when no file is given)")
	encoding := fs.String("encoding", tokenizer.CL100kBase, "cl100k_base, o200k_base or approximate")
	ids := fs.Bool("ids", false, "print the token ids, space-separated, after the count")
	if err := parse(fs, args); err != nil {
		return err
	}
	counter, err := tokenizer.Get(*encoding)
	if err != nil {
		return usageErrorf("-encoding: %v", err)
	}
	if *ids && *encoding == tokenizer.Approximate {
		return usageErrorf("-ids: the approximate encoding has no token ids")
	}
	if fs.NArg() == 0 {
		data, err := io.ReadAll(std.in)
		if err != nil {
			return fmt.Errorf("read stdin: %w", err)
		}
		printCount(std.out, counter, string(data), "", *ids)
		return nil
	}
	for _, name := range fs.Args() {
		data, err := os.ReadFile(name)
		if err != nil {
			return usageErrorf("%v", err)
		}
		label := ""
		if fs.NArg() > 1 {
			label = name
		}
		printCount(std.out, counter, string(data), label, *ids)
	}
	return nil
}

// printCount prints "N" (or "N\tLABEL"), then with ids a line of ids.
func printCount(w io.Writer, c tokenizer.Counter, text, label string, ids bool) {
	var line strings.Builder
	if ids {
		enc := c.Encode(text)
		fmt.Fprintf(&line, "%d", len(enc))
		if label != "" {
			line.WriteString("\t" + label)
		}
		line.WriteString("\n")
		for i, id := range enc {
			if i > 0 {
				line.WriteByte(' ')
			}
			line.WriteString(strconv.Itoa(id))
		}
	} else {
		fmt.Fprintf(&line, "%d", c.Count(text))
		if label != "" {
			line.WriteString("\t" + label)
		}
	}
	fmt.Fprintln(w, line.String())
}
