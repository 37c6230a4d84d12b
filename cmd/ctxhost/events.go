package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"strings"

	"google.golang.org/protobuf/encoding/protojson"

	"github.com/ctxhost/ctxhost/api/servicev1"
	"github.com/ctxhost/ctxhost/client"
	"github.com/ctxhost/ctxhost/config"
)

const eventsUsage = `[flags]

Prints the event feed of a running ctxhost serve: every session's events
(message:added, compacted, budget:warning, budget:critical,
plugin:failed, plugin:restarted, summary:failed, history:cleared,
memory:changed, checkpoint:forked) in the store's order, one line each:
its sequence, time, session ("-" for the host's own), kind and data as
JSON. It follows new events until interrupted (or -n are printed),
reconnecting after the last one printed when the server restarts; start
again with -after SEQ to miss nothing and see nothing twice. The server
is -server, else $` + serverEnv + `, else http://` + config.DefaultListen + `;
the bearer token that of -token-file, else $` + tokenEnv + `. The store must be
SQLite or PostgreSQL.`

// errEnough ends the feed once -n events are printed.
var errEnough = errors.New("enough events")

// cmdEvents prints the event feed of a running service.
func cmdEvents(args []string, std stdio) error {
	fs := newFlagSet("events", std.err, eventsUsage)
	server := fs.String("server", "", "the service's URL (default $"+serverEnv+", else http://"+config.DefaultListen+")")
	tokenFile := fs.String("token-file", "", "file holding the bearer token (default $"+tokenEnv+")")
	session := fs.String("session", "", "only session ID's events (default: every session's and the host's)")
	kinds := fs.String("kind", "", "only these kinds, comma-separated (e.g. compacted,budget:critical)")
	after := fs.Uint64("after", 0, "start after this sequence (0: from the start of what the store holds)")
	fromNow := fs.Bool("from-now", false, "start at the feed's end: only events written from now on")
	n := fs.Int("n", 0, "stop after this many events (0: follow until interrupted)")
	asJSON := fs.Bool("json", false, "print each event as JSON, one per line")
	if err := parse(fs, args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return usageErrorf("events: unexpected arguments %q (ctxhost events -h)", fs.Args())
	}
	if *fromNow && *after != 0 {
		return usageErrorf("events: -after and -from-now: choose one")
	}
	c, err := memoryClient(*server, *tokenFile)
	if err != nil {
		return err
	}
	var kindList []string
	for _, k := range strings.Split(*kinds, ",") {
		if k = strings.TrimSpace(k); k != "" {
			kindList = append(kindList, k)
		}
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	printed := 0
	err = c.WatchFeed(ctx, client.FeedOptions{After: *after, FromNow: *fromNow, Session: *session, Kinds: kindList}, func(ev *servicev1.FeedEvent) error {
		if err := printFeedEvent(std, ev, *asJSON); err != nil {
			return err
		}
		printed++
		if *n > 0 && printed >= *n {
			return errEnough
		}
		return nil
	})
	if errors.Is(err, errEnough) {
		return nil
	}
	return err
}

func printFeedEvent(std stdio, ev *servicev1.FeedEvent, asJSON bool) error {
	if asJSON {
		b, err := protojson.MarshalOptions{UseProtoNames: true}.Marshal(ev)
		if err != nil {
			return err
		}
		_, err = fmt.Fprintf(std.out, "%s\n", b)
		return err
	}
	data, err := json.Marshal(ev.Data.AsInterface())
	if err != nil {
		return err
	}
	session := ev.SessionId
	if session == "" {
		session = "-"
	}
	_, err = fmt.Fprintf(std.out, "%d %s %s %s %s\n", ev.Sequence, ev.Time, session, ev.Kind, data)
	return err
}
