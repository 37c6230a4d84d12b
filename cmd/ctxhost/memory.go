package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"strings"

	"google.golang.org/protobuf/encoding/protojson"

	"github.com/ctxhost/ctxhost/api/servicev1"
	"github.com/ctxhost/ctxhost/client"
	"github.com/ctxhost/ctxhost/config"
)

// serverEnv names the environment variable holding the service's URL
// for the commands that call a running `ctxhost serve`.
const serverEnv = "CTXHOST_SERVER"

const memoryUsage = `list SCOPE... | list -session ID
       ctxhost memory [flags] get SCOPE LABEL
       ctxhost memory [flags] set SCOPE LABEL [VALUE]   (stdin when VALUE is "-")
       ctxhost memory [flags] append SCOPE LABEL TEXT
       ctxhost memory [flags] replace SCOPE LABEL OLD NEW
       ctxhost memory [flags] delete SCOPE LABEL
       ctxhost memory [flags] history SCOPE LABEL

SCOPE is session:ID, agent:NAME or group:NAME. The commands call the
service of a running ctxhost serve (-server, else $` + serverEnv + `, else
http://` + config.DefaultListen + `) with the bearer token of -token-file,
else $` + tokenEnv

// cmdMemory reads and writes memory blocks through a running service.
func cmdMemory(args []string, std stdio) error {
	fs := newFlagSet("memory", std.err, memoryUsage)
	server := fs.String("server", "", "the service's URL (default $"+serverEnv+", else http://"+config.DefaultListen+")")
	tokenFile := fs.String("token-file", "", "file holding the bearer token (default $"+tokenEnv+")")
	session := fs.String("session", "", "list: the blocks session ID sees, as its prepares show them")
	limit := fs.Int("limit", 0, "set: the block's limit (default 5000)")
	unit := fs.String("unit", "", "set: the limit's unit, chars (default) or tokens")
	description := fs.String("description", "", "set: what the block is for, shown to the model")
	readOnly := fs.Bool("read-only", false, "set: the model's memory tools may not change the block")
	expected := fs.Uint64("expected-version", 0, "set, delete: only over this version (0: whatever version)")
	asJSON := fs.Bool("json", false, "print blocks as JSON, one per line")
	if err := parse(fs, args); err != nil {
		return err
	}
	a := fs.Args()
	if len(a) > 0 { // flags may follow the command's name too
		if err := parse(fs, a[1:]); err != nil {
			return err
		}
		a = append([]string{a[0]}, fs.Args()...)
	}
	c, err := memoryClient(*server, *tokenFile)
	if err != nil {
		return err
	}
	ctx := context.Background()
	need := func(n int) error {
		if len(a) != n+1 {
			return usageErrorf("memory %s: want %d arguments, got %d (ctxhost memory -h)", a[0], n, len(a)-1)
		}
		return nil
	}
	if len(a) == 0 {
		return usageErrorf("memory: name a command: list, get, set, append, replace, delete or history (ctxhost memory -h)")
	}
	out := blockPrinter{w: std.out, json: *asJSON}
	switch a[0] {
	case "list":
		var blocks []*servicev1.MemoryBlock
		switch {
		case *session != "" && len(a) == 1:
			blocks, err = c.SessionMemory(ctx, *session)
		case *session == "" && len(a) > 1:
			blocks, err = c.MemoryBlocks(ctx, a[1:]...)
		default:
			return usageErrorf("memory list: name scopes, or -session ID alone")
		}
		if err != nil {
			return err
		}
		return out.list(blocks)
	case "get":
		if err := need(2); err != nil {
			return err
		}
		b, err := c.MemoryBlock(ctx, a[1], a[2])
		if err != nil {
			return err
		}
		return out.value(b)
	case "set":
		if len(a) != 3 && len(a) != 4 {
			return usageErrorf("memory set: want SCOPE LABEL [VALUE]")
		}
		value := ""
		if len(a) == 4 {
			value = a[3]
		}
		if value == "-" {
			data, err := io.ReadAll(std.in)
			if err != nil {
				return fmt.Errorf("read stdin: %w", err)
			}
			value = string(data)
		}
		b, err := c.PutMemoryBlock(ctx, &servicev1.MemoryBlock{Scope: a[1], Label: a[2], Value: value, Limit: int32(*limit),
			Unit: *unit, Description: *description, ReadOnly: *readOnly}, *expected)
		if err != nil {
			return err
		}
		return out.list([]*servicev1.MemoryBlock{b})
	case "append":
		if err := need(3); err != nil {
			return err
		}
		b, err := c.AppendMemoryBlock(ctx, a[1], a[2], a[3])
		if err != nil {
			return err
		}
		return out.list([]*servicev1.MemoryBlock{b})
	case "replace":
		if err := need(4); err != nil {
			return err
		}
		b, err := c.ReplaceInMemoryBlock(ctx, a[1], a[2], a[3], a[4])
		if err != nil {
			return err
		}
		return out.list([]*servicev1.MemoryBlock{b})
	case "delete":
		if err := need(2); err != nil {
			return err
		}
		return c.DeleteMemoryBlock(ctx, a[1], a[2], *expected)
	case "history":
		if err := need(2); err != nil {
			return err
		}
		vs, err := c.MemoryBlockVersions(ctx, a[1], a[2])
		if err != nil {
			return err
		}
		return out.list(vs)
	}
	return usageErrorf("memory: unknown command %q: want list, get, set, append, replace, delete or history", a[0])
}

// memoryClient is the client of the service the flags and environment name.
func memoryClient(server, tokenFile string) (*client.Client, error) {
	if server == "" {
		server = os.Getenv(serverEnv)
	}
	if server == "" {
		server = "http://" + config.DefaultListen
	}
	token := os.Getenv(tokenEnv)
	if tokenFile != "" {
		data, err := os.ReadFile(tokenFile)
		if err != nil {
			return nil, usageErrorf("-token-file: %v", err)
		}
		token = strings.TrimSpace(string(data))
	}
	return client.New(server, client.Options{Token: token, PayloadCache: -1}), nil
}

// blockPrinter prints blocks: a line each (or JSON), or a block's value.
type blockPrinter struct {
	w    io.Writer
	json bool
}

func (p blockPrinter) list(blocks []*servicev1.MemoryBlock) error {
	for _, b := range blocks {
		if p.json {
			if err := p.printJSON(b); err != nil {
				return err
			}
			continue
		}
		flags := ""
		if b.ReadOnly {
			flags += " read-only"
		}
		if b.Deleted {
			fmt.Fprintf(p.w, "%s\t%s\tv%d\tdeleted\n", b.Scope, b.Label, b.Version)
			continue
		}
		fmt.Fprintf(p.w, "%s\t%s\tv%d\t%d/%d %s%s\t%s\n", b.Scope, b.Label, b.Version, b.Size, b.Limit, b.Unit, flags, oneLine(b.Value, 60))
	}
	return nil
}

func (p blockPrinter) value(b *servicev1.MemoryBlock) error {
	if p.json {
		return p.printJSON(b)
	}
	_, err := fmt.Fprintln(p.w, b.Value)
	return err
}

func (p blockPrinter) printJSON(b *servicev1.MemoryBlock) error {
	data, err := protojson.MarshalOptions{UseProtoNames: true}.Marshal(b)
	if err != nil {
		return err
	}
	_, err = fmt.Fprintf(p.w, "%s\n", data)
	return err
}

// oneLine is s on one line, cut to n characters.
func oneLine(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
	if r := []rune(s); len(r) > n {
		return string(r[:n-1]) + "…"
	}
	return s
}
