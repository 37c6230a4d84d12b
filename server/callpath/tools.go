package callpath

import (
	"github.com/ctxhost/ctxhost/engine"
	"github.com/ctxhost/ctxhost/sdk"
)

// The caller's tool definitions, tool choice and response schema go
// upstream as the caller wrote them (provider-specific tools and flags
// included); the session holds their function tools, choice and schema
// so that the budget counts them.

// setTools gives the session the request's tools when they changed.
func setTools(es *engine.Session, rt sdk.RequestTools) error {
	want, err := sdk.ToolsText(rt)
	if err != nil {
		return err
	}
	if have, err := sdk.ToolsText(es.Tools()); err == nil && have == want {
		return nil
	}
	return es.SetTools(rt)
}
