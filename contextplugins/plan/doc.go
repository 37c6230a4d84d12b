// Package plan is the plan context plugin: it keeps the
// agent's plan (a goal and a list of tasks with dependencies) and renders it
// as a compact checklist with progress and the current task marked. Its
// component has priority 1 and is never compacted.
//
// It runs as its own process (the ctxhost-plugin-plan command) or inside
// ctxhost itself (a plugin block with builtin = "plan").
package plan

import "github.com/ctxhost/ctxhost/sdk"

// New returns the plugin, ready to be served (sdk/serve) or called in
// process (sdk.NewLocalPlugin).
func New() sdk.Plugin { return planPlugin{} }
