package config

import (
	"fmt"
	"time"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/gohcl"
)

// attrReader evaluates the attributes of one block into Go values, records
// each attribute's range in src and collects diagnostics. A getter leaves
// dst untouched (at its default) when the attribute is absent or invalid.
type attrReader struct {
	attrs hcl.Attributes
	ctx   *hcl.EvalContext
	src   *Source
	diags *hcl.Diagnostics
}

func newAttrReader(content *hcl.BodyContent, schema *hcl.BodySchema, ctx *hcl.EvalContext, src *Source, diags *hcl.Diagnostics) *attrReader {
	if src.AttrRanges == nil {
		src.AttrRanges = map[string]hcl.Range{}
	}
	if src.invalid == nil {
		src.invalid = map[string]bool{}
	}
	for _, as := range schema.Attributes {
		if _, ok := content.Attributes[as.Name]; as.Required && !ok {
			src.invalid[as.Name] = true
		}
	}
	return &attrReader{attrs: content.Attributes, ctx: ctx, src: src, diags: diags}
}

// decode evaluates attribute name into dst (any type gohcl converts to).
// It reports whether the attribute was present and valid.
func (r *attrReader) decode(name string, dst any) bool {
	attr, ok := r.attrs[name]
	if !ok {
		return false
	}
	r.src.AttrRanges[name] = attr.Expr.Range()
	// Evaluate first: when evaluation fails (unknown variable, failing
	// function) report that alone, not a type error on top of it.
	// A value that depends on a variable that failed to resolve is unknown:
	// the variable's own diagnostic says what is wrong.
	val, d := attr.Expr.Value(r.ctx)
	if !d.HasErrors() && !val.IsWhollyKnown() {
		r.src.invalid[name] = true
		return false
	}
	if !d.HasErrors() {
		d = gohcl.DecodeExpression(attr.Expr, r.ctx, dst)
	}
	*r.diags = append(*r.diags, d...)
	if d.HasErrors() {
		r.src.invalid[name] = true
	}
	return !d.HasErrors()
}

func (r *attrReader) str(name string, dst *string)       { r.decode(name, dst) }
func (r *attrReader) integer(name string, dst *int)      { r.decode(name, dst) }
func (r *attrReader) number(name string, dst *float64)   { r.decode(name, dst) }
func (r *attrReader) boolean(name string, dst *bool)     { r.decode(name, dst) }
func (r *attrReader) strings(name string, dst *[]string) { r.decode(name, dst) }
func (r *attrReader) stringMap(name string, dst *map[string]string) {
	r.decode(name, dst)
}
func (r *attrReader) numberMap(name string, dst *map[string]float64) {
	r.decode(name, dst)
}

// intPtr sets *dst to a new int when the attribute is present and valid.
func (r *attrReader) intPtr(name string, dst **int) {
	var v int
	if r.decode(name, &v) {
		*dst = &v
	}
}

// boolPtr sets *dst to a new bool when the attribute is present and valid.
func (r *attrReader) boolPtr(name string, dst **bool) {
	var v bool
	if r.decode(name, &v) {
		*dst = &v
	}
}

// duration parses a Go duration string ("2s", "500ms") into dst; it must be
// positive.
func (r *attrReader) duration(name string, dst *time.Duration) {
	var s string
	if !r.decode(name, &s) {
		return
	}
	d, err := time.ParseDuration(s)
	if err == nil && d <= 0 {
		err = fmt.Errorf("must be positive")
	}
	if err != nil {
		r.src.invalid[name] = true
		r.errorAt(name, "Invalid duration", fmt.Sprintf("%q is not a valid duration (%v); use a Go duration such as \"2s\" or \"500ms\".", s, err))
		return
	}
	*dst = d
}

// errorAt adds an error diagnostic pointing at attribute name (or at the
// block when the attribute is absent).
func (r *attrReader) errorAt(name, summary, detail string) {
	rng := r.src.Range(name)
	*r.diags = append(*r.diags, &hcl.Diagnostic{Severity: hcl.DiagError, Summary: summary, Detail: detail, Subject: &rng})
}
