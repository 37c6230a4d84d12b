package main

import (
	"context"
	"fmt"
	"io"
	"strconv"
	"time"

	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"

	"github.com/ctxhost/ctxhost/api/servicev1"
	"github.com/ctxhost/ctxhost/config"
)

const checkpointsUsage = `list SESSION
       ctxhost checkpoints [flags] show SESSION SEQUENCE   (0: the current one)
       ctxhost checkpoints [flags] fork SESSION SEQUENCE NEW_SESSION
       ctxhost checkpoints [flags] rewind SESSION SEQUENCE [BRANCH_SESSION]

Every acknowledged turn of a session on a SQLite or PostgreSQL store is a
checkpoint. list prints them (sequence, time, agent, tokens used,
messages, payload tag); show prints the session as it stood at one (its
texts and history); fork makes a new session from one; rewind takes the
session back to one and keeps what came after as BRANCH_SESSION
(default SESSION:branch-N). The commands call the service of a running
ctxhost serve (-server, else $` + serverEnv + `, else http://` + config.DefaultListen + `)
with the bearer token of -token-file, else $` + tokenEnv

// cmdCheckpoints lists, reads, forks and rewinds checkpoints through a
// running service.
func cmdCheckpoints(args []string, std stdio) error {
	fs := newFlagSet("checkpoints", std.err, checkpointsUsage)
	server := fs.String("server", "", "the service's URL (default $"+serverEnv+", else http://"+config.DefaultListen+")")
	tokenFile := fs.String("token-file", "", "file holding the bearer token (default $"+tokenEnv+")")
	asJSON := fs.Bool("json", false, "print the answer as JSON")
	if err := parse(fs, args); err != nil {
		return err
	}
	a := fs.Args()
	if len(a) > 0 {
		if err := parse(fs, a[1:]); err != nil {
			return err
		}
		a = append([]string{a[0]}, fs.Args()...)
	}
	if len(a) == 0 {
		return usageErrorf("checkpoints: name a command: list, show, fork or rewind (ctxhost checkpoints -h)")
	}
	want := map[string][2]int{"list": {1, 1}, "show": {2, 2}, "fork": {3, 3}, "rewind": {2, 3}}
	n, ok := want[a[0]]
	if !ok {
		return usageErrorf("checkpoints: unknown command %q: want list, show, fork or rewind", a[0])
	}
	if len(a)-1 < n[0] || len(a)-1 > n[1] {
		return usageErrorf("checkpoints %s: want %d arguments, got %d (ctxhost checkpoints -h)", a[0], n[0], len(a)-1)
	}
	var seq uint64
	if len(a) > 2 {
		var err error
		if seq, err = strconv.ParseUint(a[2], 10, 64); err != nil {
			return usageErrorf("checkpoints %s: sequence %q: want a number", a[0], a[2])
		}
	}
	c, err := memoryClient(*server, *tokenFile)
	if err != nil {
		return err
	}
	ctx := context.Background()
	var answer proto.Message
	switch a[0] {
	case "list":
		cps, err := c.Checkpoints(ctx, a[1])
		if err != nil {
			return err
		}
		if !*asJSON {
			for _, cp := range cps {
				printCheckpoint(std.out, cp)
			}
			return nil
		}
		answer = &servicev1.ListCheckpointsResponse{Checkpoints: cps}
	case "show":
		st, err := c.Checkpoint(ctx, a[1], seq)
		if err != nil {
			return err
		}
		if !*asJSON {
			printCheckpoint(std.out, st.Checkpoint)
			for _, t := range []struct{ name, text string }{{"system", st.SystemPrompt}, {"instructions", st.Instructions}, {"input", st.Input}} {
				if t.text != "" {
					fmt.Fprintf(std.out, "%s: %s\n", t.name, oneLine(t.text, 100))
				}
			}
			for _, e := range st.Entries {
				fmt.Fprintf(std.out, "%4d %-9s %-12s %s\n", e.Position, e.Message.GetRole(), e.Kind, oneLine(e.Message.GetContent(), 80))
			}
			return nil
		}
		answer = st
	case "fork":
		f, err := c.Fork(ctx, a[1], seq, a[3])
		if err != nil {
			return err
		}
		if !*asJSON {
			fmt.Fprintf(std.out, "forked %s at sequence %d as %s (%d messages)\n", a[1], f.Checkpoint.GetSequence(), a[3], f.Session.GetMessages())
			return nil
		}
		answer = f
	case "rewind":
		branch := ""
		if len(a) == 4 {
			branch = a[3]
		}
		rw, err := c.Rewind(ctx, a[1], seq, branch)
		if err != nil {
			return err
		}
		if !*asJSON {
			fmt.Fprintf(std.out, "rewound %s to sequence %d (now at %d); what came after is %s, forked at %d\n",
				a[1], seq, rw.Sequence, rw.BranchSessionId, rw.BranchSequence)
			return nil
		}
		answer = rw
	}
	b, err := protojson.Marshal(answer)
	if err != nil {
		return err
	}
	_, err = fmt.Fprintln(std.out, string(b))
	return err
}

// printCheckpoint prints one checkpoint on a line.
func printCheckpoint(w io.Writer, cp *servicev1.Checkpoint) {
	at := "-"
	if ms := cp.GetTimeUnixMs(); ms > 0 {
		at = time.UnixMilli(ms).UTC().Format(time.RFC3339)
	}
	agent := cp.GetAgent()
	if agent == "" {
		agent = "-"
	}
	tag := cp.GetPayloadTag()
	if tag == "" {
		tag = "-"
	}
	fmt.Fprintf(w, "%d\t%s\t%s\t%d/%d tokens\t%d messages\t%s\n", cp.GetSequence(), at, agent,
		cp.GetBudget().GetUsed(), cp.GetBudget().GetAvailable(), cp.GetMessages(), tag)
}
