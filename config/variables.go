package config

import (
	"fmt"
	"sort"
	"strings"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/ext/typeexpr"
	"github.com/hashicorp/hcl/v2/hclsyntax"
	"github.com/zclconf/go-cty/cty"
	"github.com/zclconf/go-cty/cty/convert"
	ctyjson "github.com/zclconf/go-cty/cty/json"
)

// EnvVarPrefix is the prefix of environment variables that set HCL
// variables: CTXHOST_VAR_name sets var.name.
const EnvVarPrefix = "CTXHOST_VAR_"

// fileBlock is a top-level block with the evaluation context of its file.
type fileBlock struct {
	block *hcl.Block
	ctx   *hcl.EvalContext
	dir   string
}

// resolveVariables decodes the variable blocks and resolves each value with
// the precedence default < CTXHOST_VAR_name < -var name=value. It returns
// the variables and the object bound to `var` in expressions.
func resolveVariables(blocks []fileBlock, flags map[string]string, env map[string]string, diags *hcl.Diagnostics) ([]*Variable, cty.Value) {
	values := map[string]cty.Value{}
	var out []*Variable
	for _, fb := range blocks {
		v, val, ok := resolveVariable(fb, flags, env, diags)
		out = append(out, v)
		if !ok {
			val = cty.DynamicVal // unknown: references to it report nothing more
		}
		values[v.Name] = val
	}
	for _, name := range sortedKeys(flags) {
		if find(out, name, func(v *Variable) string { return v.Name }) == nil {
			*diags = append(*diags, &hcl.Diagnostic{
				Severity: hcl.DiagError,
				Summary:  "Undeclared variable",
				Detail:   fmt.Sprintf("A value was given for variable %q, but no variable block declares it.", name),
			})
		}
	}
	return out, cty.ObjectVal(values)
}

func resolveVariable(fb fileBlock, flags, env map[string]string, diags *hcl.Diagnostics) (*Variable, cty.Value, bool) {
	v := &Variable{Name: fb.block.Labels[0], Source: Source{DeclRange: fb.block.DefRange}}
	content, d := fb.block.Body.Content(variableSchema)
	*diags = append(*diags, d...)
	r := newAttrReader(content, variableSchema, fb.ctx, &v.Source, diags)
	r.str("description", &v.Description)

	ty := cty.DynamicPseudoType
	if attr, ok := content.Attributes["type"]; ok {
		v.AttrRanges["type"] = attr.Expr.Range()
		t, d := typeexpr.TypeConstraint(attr.Expr)
		*diags = append(*diags, d...)
		if d.HasErrors() {
			return v, cty.NilVal, false
		}
		ty = t
	}

	var val cty.Value
	var from string
	if raw, ok := flags[v.Name]; ok {
		val, from = parseVariableText(raw, ty), "-var "+v.Name
	} else if raw, ok := env[EnvVarPrefix+v.Name]; ok {
		val, from = parseVariableText(raw, ty), EnvVarPrefix+v.Name
	} else if attr, ok := content.Attributes["default"]; ok {
		v.AttrRanges["default"] = attr.Expr.Range()
		dv, d := attr.Expr.Value(fb.ctx)
		*diags = append(*diags, d...)
		if d.HasErrors() {
			return v, cty.NilVal, false
		}
		val, from = dv, "default"
	} else {
		*diags = append(*diags, &hcl.Diagnostic{
			Severity: hcl.DiagError,
			Summary:  "No value for required variable",
			Detail:   fmt.Sprintf("Variable %q has no default; set it with -var %s=VALUE or %s%s.", v.Name, v.Name, EnvVarPrefix, v.Name),
			Subject:  v.DeclRange.Ptr(),
		})
		return v, cty.NilVal, false
	}
	if val == cty.NilVal {
		v.errorf(diags, from, fmt.Errorf("not a valid %s", ty.FriendlyName()))
		return v, cty.NilVal, false
	}
	converted, err := convert.Convert(val, ty)
	if err != nil {
		v.errorf(diags, from, err)
		return v, cty.NilVal, false
	}
	v.Value = valueText(converted)
	return v, converted, true
}

func (v *Variable) errorf(diags *hcl.Diagnostics, from string, err error) {
	*diags = append(*diags, &hcl.Diagnostic{
		Severity: hcl.DiagError,
		Summary:  "Invalid value for variable",
		Detail:   fmt.Sprintf("The value of variable %q (from %s) is invalid: %v.", v.Name, from, err),
		Subject:  v.Range("default").Ptr(),
	})
}

// parseVariableText turns a -var or environment value into a cty value: the
// text itself for string (or untyped) variables, otherwise the text parsed
// as an HCL literal expression, as Terraform does. It returns cty.NilVal
// when the text does not parse.
func parseVariableText(raw string, ty cty.Type) cty.Value {
	if ty == cty.String || ty == cty.DynamicPseudoType {
		return cty.StringVal(raw)
	}
	expr, d := hclsyntax.ParseExpression([]byte(raw), "<value>", hcl.InitialPos)
	if d.HasErrors() {
		return cty.NilVal
	}
	val, d := expr.Value(nil)
	if d.HasErrors() {
		return cty.NilVal
	}
	return val
}

// valueText renders a variable value: strings as themselves, anything else
// as JSON.
func valueText(v cty.Value) string {
	if v.IsNull() {
		return ""
	}
	if v.Type() == cty.String {
		return v.AsString()
	}
	b, err := ctyjson.Marshal(v, v.Type())
	if err != nil {
		return v.GoString()
	}
	return string(b)
}

// envMap turns KEY=VALUE pairs into a map (later pairs win).
func envMap(env []string) map[string]string {
	m := make(map[string]string, len(env))
	for _, kv := range env {
		if k, v, ok := strings.Cut(kv, "="); ok {
			m[k] = v
		}
	}
	return m
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
