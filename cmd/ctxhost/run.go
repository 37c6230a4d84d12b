package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"

	"github.com/ctxhost/ctxhost/engine"
)

func cmdRun(args []string, std stdio) error {
	fs := newFlagSet("run", std.err, "TRANSCRIPT")
	ss := sessionSetup{streams: true} // each turn is written out before the next
	ss.cf.register(fs, true)
	ss.register(fs)
	ss.store.register(fs)
	outFile := fs.String("o", "", "write the final payload to FILE instead of stdout")
	format := fs.String("format", "text", "output: text (budget bars per turn) or json (a record of every turn, written as each turn is prepared)")
	pretty := fs.Bool("pretty", false, "indent the final payload when it is JSON (text output and -o FILE)")
	inspect := fs.String("inspect", "", "after the replay, serve its turns in the web inspector on this loopback HOST:PORT until interrupted")
	if err := parse(fs, args); err != nil {
		return err
	}
	if *format != "text" && *format != "json" {
		return usageErrorf("-format %q: want text or json", *format)
	}
	if fs.NArg() != 1 {
		fs.Usage()
		return &usageError{err: fmt.Errorf("run takes one transcript, got %d arguments", fs.NArg()), printed: false}
	}
	path := fs.Arg(0)
	ctx := context.Background()
	st, err := ss.start(ctx, path, std)
	if err != nil {
		return err
	}
	defer st.close()
	out := newEscapingWriter(std.out) // control characters from transcripts never reach the terminal raw
	defer out.Flush()
	ri, err := newReplayInspector(*inspect, st.session, st.engine.Context.Name)
	if err != nil {
		return err
	}

	// Each turn is written as it is prepared; only the last turn (for the
	// final payload) and the cache sums are kept.
	var stream *recordStream
	if *format == "json" {
		if stream, err = newRecordStream(out, path, st.transcript.Format, st.engine.Context.Name); err != nil {
			return err
		}
	}
	var last *engine.Turn
	var cache cacheSummary
	onTurn := func(t engine.Turn) error {
		last = &t
		ri.turn(t)
		if t.Prepared != nil {
			cache.add(t.Prepared.Cache)
		}
		if stream != nil {
			return stream.turn(newTurnRecord(t))
		}
		printTurn(out, t)
		return nil
	}
	opts := engine.ReplayOptions{File: path, OnTurn: onTurn, Progress: progressFunc(std.err), Events: st.transcript.Events}
	if err := engine.ReplayReader(ctx, st.session, st.open, opts); err != nil {
		return err
	}
	if stream != nil {
		var summary *cacheSummary
		if cache.Managed.Turns > 0 {
			summary = &cache
		}
		if err := stream.close(summary); err != nil {
			return err
		}
	}
	if *format == "text" {
		cache.print(out)
	}
	if err := writePayload(out, *outFile, *format == "text", *pretty, last); err != nil || ri == nil {
		return err
	}
	if err := out.Flush(); err != nil {
		return err
	}
	return ri.serve(std)
}

// writePayload writes the final turn's payload to file (as its bytes), or
// to w after a header when header is set (text output) and file is empty;
// pretty indents a JSON payload. A CLI format's separate system text is
// written before the payload on w.
func writePayload(w io.Writer, file string, header, pretty bool, last *engine.Turn) error {
	if last == nil {
		return nil
	}
	payload, mediaType := last.Payload()
	if pretty && isJSONMedia(mediaType) {
		var b bytes.Buffer
		if json.Indent(&b, payload, "", "  ") == nil {
			payload = append(b.Bytes(), '\n')
		}
	}
	if file != "" {
		if err := os.WriteFile(file, payload, 0o644); err != nil {
			return fmt.Errorf("write payload: %w", err)
		}
		return nil
	}
	if !header {
		return nil
	}
	if p := last.Prepared; p != nil && p.HasSystem {
		fmt.Fprintf(w, "\n--- system text (separate, %d bytes) ---\n%s\n", len(p.System), p.System)
	}
	fmt.Fprintf(w, "\n--- final payload (%s, %d bytes) ---\n", mediaType, len(payload))
	if _, err := w.Write(payload); err != nil {
		return fmt.Errorf("write payload: %w", err)
	}
	if len(payload) > 0 && payload[len(payload)-1] != '\n' {
		fmt.Fprintln(w)
	}
	return nil
}
