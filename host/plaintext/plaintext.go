// Package plaintext is the plain-text fallback assembler,
// built into the host (no process): the host uses it, with a logged
// warning naming the agent type, when no assembler is configured for an
// agent.
//
// The payload is "{system}\n\n{context}\n\n{message}" with no headers or
// markers: the system body (assembly.SystemBody), then the context (team task,
// supporting context and the conversation rendered as lines, see
// sdk/assembly), then the current input. Empty parts are skipped, so the
// text never holds a double blank line where a part is missing.
package plaintext

import (
	"context"

	"github.com/ctxhost/ctxhost/host"
	"github.com/ctxhost/ctxhost/sdk"
	"github.com/ctxhost/ctxhost/sdk/assembly"
)

// Name and Format of the fallback assembler.
const (
	Name   = "plaintext"
	Format = "text"
)

// Assembler is the PlainText fallback.
type Assembler struct{}

var _ host.InlineAssembler = (*Assembler)(nil)

// New returns the PlainText fallback assembler.
func New() *Assembler { return &Assembler{} }

// conversations keeps each stream's rendered messages (see
// assembly.ConversationCache).
var conversations = assembly.NewConversationCache(0)

var formats = assembly.Formats{
	{FormatInfo: sdk.FormatInfo{Name: Format, MediaType: "text/plain", Description: "{system}\\n\\n{context}\\n\\n{message}, the plain-text prompt of any agent type without an assembler of its own, no section markers"},
		Build: func(req sdk.AssembleRequest, p assembly.Parts) (sdk.AssembleResult, error) {
			contextText := assembly.SystemBody(p.TeamTask, assembly.ContextBody(p.Context), conversations.Render(req, p.History))
			return sdk.AssembleResult{Payload: []byte(assembly.SystemBody(p.System, contextText, p.Input))}, nil
		}},
}

// Inline reports true: the fallback computes on its request alone, so the
// host calls it on the turn's goroutine (host.InlineAssembler).
func (*Assembler) Inline(string) bool { return true }

// Info describes the fallback: name "plaintext", one format "text".
func (*Assembler) Info() sdk.AssemblerInfo {
	return sdk.AssemblerInfo{
		Name:            Name,
		Description:     "built-in fallback for agents without an assembler",
		ProtocolVersion: sdk.ProtocolVersion,
		Formats:         formats.Info(),
	}
}

// Assemble builds the plain-text payload. The format must be "text" or
// empty; any other is an error wrapping sdk.ErrInvalidArgs.
func (*Assembler) Assemble(_ context.Context, req sdk.AssembleRequest) (sdk.AssembleResult, error) {
	return formats.Assemble(Name, req)
}
