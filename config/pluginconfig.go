package config

import (
	"encoding/json"
	"fmt"

	"github.com/ctxhost/ctxhost/sdk"
	"github.com/hashicorp/hcl/v2"
	"github.com/zclconf/go-cty/cty"
	"github.com/zclconf/go-cty/cty/convert"
	ctyjson "github.com/zclconf/go-cty/cty/json"
)

// configTypes maps the schema types a plugin can declare to cty types.
var configTypes = map[string]cty.Type{
	sdk.ConfigString:     cty.String,
	sdk.ConfigNumber:     cty.Number,
	sdk.ConfigBool:       cty.Bool,
	sdk.ConfigListString: cty.List(cty.String),
	sdk.ConfigMapString:  cty.Map(cty.String),
}

// DecodePluginConfig decodes a plugin's `config { ... }` body against the
// schema the plugin declared in Describe and returns the JSON object to
// pass to Configure. Unknown attributes, missing required ones and values
// of the wrong type are reported with ranges in the HCL; absent optional
// attributes take the schema's default (or are left out when it has none).
// A schema the host cannot use (unknown type, bad default) is reported
// against the config body, naming the field. ctx is Plugin.EvalContext.
func DecodePluginConfig(body hcl.Body, schema []sdk.ConfigField, ctx *hcl.EvalContext) (json.RawMessage, hcl.Diagnostics) {
	if body == nil {
		body = hcl.EmptyBody()
	}
	var diags hcl.Diagnostics
	bodySchema := &hcl.BodySchema{}
	for _, f := range schema {
		bodySchema.Attributes = append(bodySchema.Attributes, hcl.AttributeSchema{Name: f.Name, Required: f.Required})
	}
	content, d := body.Content(bodySchema)
	diags = append(diags, d...)
	out := map[string]json.RawMessage{}
	for _, f := range schema {
		ty, ok := configTypes[f.Type]
		if !ok {
			diags = append(diags, schemaError(body, f, fmt.Sprintf("unknown type %q", f.Type)))
			continue
		}
		attr, set := content.Attributes[f.Name]
		if !set {
			if len(f.Default) > 0 {
				v, err := defaultValue(f.Default, ty)
				if err != nil {
					diags = append(diags, schemaError(body, f, "invalid default: "+err.Error()))
					continue
				}
				out[f.Name] = v
			}
			continue
		}
		v, d := attributeJSON(attr, ty, ctx)
		diags = append(diags, d...)
		if v != nil {
			out[f.Name] = v
		}
	}
	if diags.HasErrors() {
		return nil, diags
	}
	b, err := json.Marshal(out) // encoding/json sorts map keys: same config, same bytes
	if err != nil {
		diags = append(diags, &hcl.Diagnostic{Severity: hcl.DiagError, Summary: "Cannot encode plugin config", Detail: err.Error()})
		return nil, diags
	}
	return b, diags
}

// attributeJSON evaluates attr, converts it to ty and renders it as JSON.
func attributeJSON(attr *hcl.Attribute, ty cty.Type, ctx *hcl.EvalContext) (json.RawMessage, hcl.Diagnostics) {
	val, diags := attr.Expr.Value(ctx)
	if diags.HasErrors() {
		return nil, diags
	}
	converted, err := convert.Convert(val, ty)
	if err == nil && (converted.IsNull() || !converted.IsWhollyKnown()) {
		err = fmt.Errorf("a value is required")
	}
	if err != nil {
		return nil, append(diags, &hcl.Diagnostic{
			Severity: hcl.DiagError,
			Summary:  "Incorrect attribute value type",
			Detail:   fmt.Sprintf("Inappropriate value for attribute %q: %s required (%v).", attr.Name, ty.FriendlyName(), err),
			Subject:  attr.Expr.Range().Ptr(),
		})
	}
	b, err := ctyjson.Marshal(converted, ty)
	if err != nil {
		return nil, append(diags, &hcl.Diagnostic{Severity: hcl.DiagError, Summary: "Cannot encode value",
			Detail: err.Error(), Subject: attr.Expr.Range().Ptr()})
	}
	return b, diags
}

// defaultValue checks a schema default against its type and returns it as
// canonical JSON.
func defaultValue(raw json.RawMessage, ty cty.Type) (json.RawMessage, error) {
	v, err := ctyjson.Unmarshal(raw, ty)
	if err != nil {
		return nil, err
	}
	return ctyjson.Marshal(v, ty)
}

func schemaError(body hcl.Body, f sdk.ConfigField, what string) *hcl.Diagnostic {
	return &hcl.Diagnostic{
		Severity: hcl.DiagError,
		Summary:  "Invalid plugin config schema",
		Detail:   fmt.Sprintf("The plugin declares config field %q with %s; this is a bug in the plugin.", f.Name, what),
		Subject:  body.MissingItemRange().Ptr(),
	}
}
