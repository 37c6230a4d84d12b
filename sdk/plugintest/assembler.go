package plugintest

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"

	"github.com/ctxhost/ctxhost/sdk"
	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

// AssemblerOptions tell the kit what to assemble.
type AssemblerOptions struct {
	// Request is the request assembled in every format (its Format is set
	// by the kit). Default: SampleRequest().
	Request *sdk.AssembleRequest
	// Concurrency is how many Assemble calls run at once (default 8).
	Concurrency int
}

func (o AssemblerOptions) withDefaults() AssemblerOptions {
	if o.Request == nil {
		r := SampleRequest()
		o.Request = &r
	}
	if o.Concurrency <= 0 {
		o.Concurrency = 8
	}
	return o
}

// SampleRequest is a small request with a component in every slot and a
// conversation with a tool call.
func SampleRequest() sdk.AssembleRequest {
	return sdk.AssembleRequest{
		Components: []sdk.Component{
			{Name: sdk.ComponentSystemPrompt, Slot: sdk.SlotSystem, Text: "You are a careful assistant."},
			{Name: "plan", Priority: 1, Slot: sdk.SlotContext, Text: "1. read the code\n2. fix the bug"},
			{Name: sdk.ComponentHistory, Priority: 5, Compactable: true, Slot: sdk.SlotHistory, Messages: []sdk.Message{
				{ID: "m1", Role: sdk.RoleUser, Content: "Why does the test fail?"},
				{ID: "m2", Role: sdk.RoleAssistant, Content: "Let me look.", ToolCalls: []sdk.ToolCall{{ID: "t1", Name: "read_file", Arguments: `{"path":"a.go"}`}}},
				{ID: "m3", Role: sdk.RoleTool, ToolCallID: "t1", ToolName: "read_file", Content: "package a"},
			}},
			{Name: sdk.ComponentInput, Slot: sdk.SlotInput, Text: "Please fix it."},
		},
		Budget: sdk.Budget{Window: 100000, Reserved: 4000, Available: 96000, Used: 120, Status: sdk.StatusOK},
		Agent:  sdk.AgentIdentity{Name: "coder", Type: "claude-code"},
	}
}

// AssemblerCheck is one conformance check of an assembler.
type AssemblerCheck struct {
	Name string
	Doc  string
	Run  func(ctx context.Context, target AssemblerTarget, opts AssemblerOptions) error
}

// AssemblerChecks are the checks RunAssemblerTarget runs, in order.
var AssemblerChecks = []AssemblerCheck{
	{"Describe", "Describe must be sane", checkAssemblerDescribe},
	{"Formats", "every format must assemble deterministically with its declared media type", checkFormats},
	{"UnknownFormat", "an unknown format must fail with sdk.ErrInvalidArgs", checkUnknownFormat},
	{"Concurrent", "concurrent Assemble calls must give identical payloads", checkConcurrentAssemble},
	{"Session", "a session's turns (history appended to, components changed, added and dropped) must give the payloads of the same requests on their own", checkSessionTurns},
}

func checkAssemblerDescribe(_ context.Context, target AssemblerTarget, _ AssemblerOptions) error {
	info := target.Info()
	var errs []error
	if info.Name == "" {
		errs = append(errs, errors.New("empty name"))
	}
	if info.ProtocolVersion != sdk.ProtocolVersion {
		errs = append(errs, fmt.Errorf("protocol version %d, want %d", info.ProtocolVersion, sdk.ProtocolVersion))
	}
	if len(info.Formats) == 0 {
		errs = append(errs, errors.New("no formats"))
	}
	seen := map[string]bool{}
	for _, f := range info.Formats {
		if f.Name == "" || f.MediaType == "" {
			errs = append(errs, fmt.Errorf("format %q needs a name and a media type", f.Name))
		}
		if seen[f.Name] {
			errs = append(errs, fmt.Errorf("format %q listed twice", f.Name))
		}
		seen[f.Name] = true
	}
	return errors.Join(errs...)
}

func assemble(ctx context.Context, target AssemblerTarget, opts AssemblerOptions, format string) (sdk.AssembleResult, error) {
	req := *opts.Request
	req.Format = format
	res, err := target.Assemble(ctx, req)
	if err != nil {
		return res, fmt.Errorf("Assemble(format %q): %w", format, err)
	}
	return res, nil
}

func checkFormats(ctx context.Context, target AssemblerTarget, opts AssemblerOptions) error {
	var errs []error
	for _, f := range target.Info().Formats {
		a, err := assemble(ctx, target, opts, f.Name)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		b, err := assemble(ctx, target, opts, f.Name)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		if len(a.Payload) == 0 {
			errs = append(errs, fmt.Errorf("format %q: empty payload", f.Name))
		}
		if a.MediaType != f.MediaType {
			errs = append(errs, fmt.Errorf("format %q: media type %q, declared %q", f.Name, a.MediaType, f.MediaType))
		}
		if diff := cmp.Diff(a, b); diff != "" {
			errs = append(errs, fmt.Errorf("format %q: two calls differ (-first +second):\n%s", f.Name, diff))
		}
	}
	return errors.Join(errs...)
}

func checkUnknownFormat(ctx context.Context, target AssemblerTarget, opts AssemblerOptions) error {
	_, err := assemble(ctx, target, opts, "ctxhost.conformance.no-such-format")
	if !errors.Is(err, sdk.ErrInvalidArgs) {
		return fmt.Errorf("got %v, want an error wrapping %q", err, sdk.ErrInvalidArgs)
	}
	return nil
}

func checkConcurrentAssemble(ctx context.Context, target AssemblerTarget, opts AssemblerOptions) error {
	formats := target.Info().Formats
	if len(formats) == 0 {
		return errors.New("no formats to assemble")
	}
	format := formats[0].Name
	want, err := assemble(ctx, target, opts, format)
	if err != nil {
		return err
	}
	errs := make([]error, opts.Concurrency)
	var wg sync.WaitGroup
	for i := range opts.Concurrency {
		wg.Go(func() {
			got, err := assemble(ctx, target, opts, format)
			if err == nil && !bytes.Equal(got.Payload, want.Payload) {
				err = fmt.Errorf("call %d: payload differs from a sequential call", i)
			}
			errs[i] = err
		})
	}
	wg.Wait()
	return errors.Join(errs...)
}

// sessionTurns is a session's requests built on base, one a turn: the
// history appended to, a message changed, the context component changed,
// dropped and brought back, the input changed. inPlace: the history grows
// in place, in one array (a changed message gives a new one), as the host
// sends it with ImmutableMessages.
func sessionTurns(base sdk.AssembleRequest, inPlace bool) []sdk.AssembleRequest {
	var out []sdk.AssembleRequest
	comps := slices.Clone(base.Components)
	var hist []sdk.Message // inPlace: the history, grown in place
	for turn := range 12 {
		next := make([]sdk.Component, 0, len(comps)+1)
		for _, c := range comps {
			switch {
			case c.Slot == sdk.SlotHistory && c.IsMessages():
				m := sdk.Message{ID: fmt.Sprint("conformance-", turn), Role: []string{sdk.RoleUser, sdk.RoleAssistant}[turn%2],
					Content: fmt.Sprintf("turn %d of the conformance session", turn)}
				if inPlace {
					if hist == nil || turn%4 == 3 && len(hist) > 1 {
						if hist == nil {
							hist = c.Messages
						}
						hist = append(make([]sdk.Message, 0, len(hist)+16), hist...)
						if turn%4 == 3 {
							hist[0].Content += " (masked)"
						}
					}
					hist = append(hist, m)
					c.Messages = hist[:len(hist):len(hist)]
					break
				}
				c.Messages = slices.Clip(c.Messages)
				if turn%4 == 3 && len(c.Messages) > 1 {
					c.Messages = slices.Clone(c.Messages)
					c.Messages[0].Content += " (masked)"
				}
				c.Messages = append(c.Messages, m)
			case c.Slot == sdk.SlotContext && turn%5 == 2:
				continue // dropped this turn
			case c.Slot == sdk.SlotContext:
				c.Text = fmt.Sprintf("%s (turn %d)", c.Text, turn/3)
			case c.Slot == sdk.SlotInput:
				c.Text = fmt.Sprintf("input of turn %d", turn)
			}
			next = append(next, c)
		}
		req := base
		req.Components = next
		out = append(out, req)
		if turn%5 != 2 {
			comps = next
		}
	}
	return out
}

// checkSessionTurns sends a session's turns (sessionTurns), and each on
// its own (another session), and compares the payloads; then again with
// the history grown in place and sent with ImmutableMessages, as the host
// sends it (an assembler may then recognise it by identity).
func checkSessionTurns(ctx context.Context, target AssemblerTarget, opts AssemblerOptions) error {
	for _, inPlace := range []bool{false, true} {
		session := "ctxhost-conformance"
		if inPlace {
			session += "-in-place"
		}
		for _, f := range target.Info().Formats {
			for i, req := range sessionTurns(*opts.Request, inPlace) {
				req.Format = f.Name
				want, err := target.Assemble(ctx, req)
				if err != nil {
					return fmt.Errorf("format %q, turn %d on its own: %w", f.Name, i, err)
				}
				req.Session, req.ImmutableMessages = session, inPlace
				got, err := target.Assemble(ctx, req)
				if err != nil {
					return fmt.Errorf("format %q, turn %d of the session (immutable messages %v): %w", f.Name, i, inPlace, err)
				}
				// Repeats says how much of the session's last payload this
				// one repeats: a session's own figure, not the payload's.
				if got.Repeats < 0 || got.Repeats > len(got.Payload) {
					return fmt.Errorf("format %q, turn %d (immutable messages %v): repeats %d bytes of a %d-byte payload", f.Name, i, inPlace, got.Repeats, len(got.Payload))
				}
				if diff := cmp.Diff(want, got, cmpopts.IgnoreFields(sdk.AssembleResult{}, "Repeats")); diff != "" {
					return fmt.Errorf("format %q, turn %d (immutable messages %v): the session's payload differs from the request's on its own (-alone +session):\n%s", f.Name, i, inPlace, diff)
				}
			}
		}
	}
	return nil
}
