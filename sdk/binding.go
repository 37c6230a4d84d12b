package sdk

import "context"

// bindingKey is the context key under which a call carries its binding name.
type bindingKey struct{}

// WithBinding returns ctx carrying the binding name: the label of the HCL
// plugin block a call is for. The host sets it on every call to a plugin
// process; in-process callers (tests, the conformance kit) may set it too.
func WithBinding(ctx context.Context, name string) context.Context {
	return context.WithValue(ctx, bindingKey{}, name)
}

// Binding returns the binding name ctx carries: the label of the HCL plugin
// block the call is for (plugin "design_docs" { ... } → "design_docs"), or
// "" when the caller did not say. One binary can be bound under several
// names, one process each; the host names the plugin's component after its
// binding, so a Session never has to choose a component name itself.
func Binding(ctx context.Context) string {
	name, _ := ctx.Value(bindingKey{}).(string)
	return name
}
