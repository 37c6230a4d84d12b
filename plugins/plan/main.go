// Command ctxhost-plugin-plan is the plan context plugin: it keeps the
// agent's plan (a goal and a list of tasks with dependencies) and renders it
// as a compact checklist with progress and the current task marked. Its
// component has priority 1 and is never compacted.
package main

import (
	"github.com/ctxhost/ctxhost/contextplugins/plan"
	"github.com/ctxhost/ctxhost/sdk/serve"
)

func main() { serve.Plugin(plan.New()) }
