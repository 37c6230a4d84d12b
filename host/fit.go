package host

import "github.com/ctxhost/ctxhost/sdk"

// FitPolicy fits a session's context to a fixed budget per component, in
// place of the strategy and the compaction pipeline: a fresh task
// context's token budgeter is one. Prepare gathers and counts as for any
// turn, hands the components (in assembly order) and the plugins left
// out to Fit, recounts what Fit returns and assembles it. Fit returns the
// components to assemble, in assembly order: it may cut, rename and
// reorder them and add empty ones (for plugins left out), and it returns
// the warnings that replace the gather's. Keeping within the window is
// the policy's: Prepare does not check a fitted context against it.
type FitPolicy interface {
	Fit(components []sdk.Component, leftOut []PluginFailure) ([]sdk.Component, []string)
}

// fit applies the session's FitPolicy: the components it returns are
// counted again (the host is the authority on tokens); its warnings
// replace the gather's.
func (t *turn) fit(cs []countedComponent, out *Prepared) []countedComponent {
	s := t.s
	in := make([]sdk.Component, len(cs))
	for i, c := range cs {
		in[i] = c.comp
	}
	fitted, warnings := s.cfg.Fit.Fit(in, out.LeftOut)
	out.Warnings = warnings
	res := make([]countedComponent, len(fitted))
	for i := range fitted {
		res[i] = countedComponent{comp: fitted[i], tokens: sdk.CountComponent(s.counter, &fitted[i])}
	}
	return res
}
