package config

import (
	"encoding/json"
	"sort"
	"testing"

	"github.com/ctxhost/ctxhost/sdk"
	"github.com/google/go-cmp/cmp"
	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclsyntax"
)

var planSchema = []sdk.ConfigField{
	{Name: "max_items", Type: sdk.ConfigNumber, Required: true},
	{Name: "title", Type: sdk.ConfigString, Default: json.RawMessage(`"Plan"`)},
	{Name: "strict", Type: sdk.ConfigBool, Default: json.RawMessage(`true`)},
	{Name: "tags", Type: sdk.ConfigListString},
	{Name: "labels", Type: sdk.ConfigMapString},
}

func TestDecodePluginConfigFromLoadedConfig(t *testing.T) {
	cfg, diags := Load([]string{"testdata/good"}, map[string]string{"fake_sha": fakeSHA(t)}, nil)
	if diags.HasErrors() {
		t.Fatal(FormatDiagnostics(diags, cfg.Files))
	}
	plan := cfg.Plugin("plan")
	got, diags := DecodePluginConfig(plan.Config, planSchema, plan.EvalContext)
	if diags.HasErrors() {
		t.Fatal(FormatDiagnostics(diags, cfg.Files))
	}
	if want := `{"max_items":20,"strict":true,"title":"PLAN"}`; string(got) != want {
		t.Errorf("got %s, want %s", got, want)
	}
	// A plugin without a config block gets its defaults.
	mem := cfg.Plugin("memory")
	got, diags = DecodePluginConfig(mem.Config, planSchema[1:], mem.EvalContext)
	if diags.HasErrors() || string(got) != `{"strict":true,"title":"Plan"}` {
		t.Errorf("memory: got %s %v", got, diags)
	}
}

func TestDecodePluginConfig(t *testing.T) {
	tests := []struct {
		name   string
		src    string
		schema []sdk.ConfigField
		want   string   // JSON when no errors
		diags  []string // sorted DiagnosticLines
	}{
		{"all types", `
max_items = 3
title     = "Steps"
strict    = false
tags      = ["a", "b"]
labels    = { team = "core", "z" = "last" }
`, planSchema, `{"labels":{"team":"core","z":"last"},"max_items":3,"strict":false,"tags":["a","b"],"title":"Steps"}`, nil},
		{"conversions like HCL", `
max_items = "7"
strict    = "true"
`, planSchema, `{"max_items":7,"strict":true,"title":"Plan"}`, nil},
		{"empty schema, empty body", ``, nil, `{}`, nil},
		{"every problem at once", `
colour    = "red"
title     = ["not", "a", "string"]
tags      = "x"
labels    = ["k"]
strict    = "sometimes"
`, planSchema, "", []string{
			"plugin.hcl:1:1: Missing required argument",
			"plugin.hcl:2:1: Unsupported argument",
			"plugin.hcl:3:13: Incorrect attribute value type",
			"plugin.hcl:4:13: Incorrect attribute value type",
			"plugin.hcl:5:13: Incorrect attribute value type",
			"plugin.hcl:6:13: Incorrect attribute value type",
		}},
		{"null value", `max_items = null`, planSchema, "", []string{
			"plugin.hcl:1:13: Incorrect attribute value type",
		}},
		{"bad schema from the plugin", `x = 1`, []sdk.ConfigField{
			{Name: "x", Type: "int"},
			{Name: "y", Type: sdk.ConfigNumber, Default: json.RawMessage(`"one"`)},
		}, "", []string{
			"plugin.hcl:1:1: Invalid plugin config schema",
			"plugin.hcl:1:1: Invalid plugin config schema",
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			file, d := hclsyntax.ParseConfig([]byte(tt.src), "plugin.hcl", hcl.InitialPos)
			if d.HasErrors() {
				t.Fatal(d)
			}
			got, diags := DecodePluginConfig(file.Body, tt.schema, nil)
			lines := DiagnosticLines(diags)
			sort.Strings(lines)
			if diff := cmp.Diff(tt.diags, lines, cmpEmpty); diff != "" {
				t.Errorf("diagnostics (-want +got):\n%s", diff)
			}
			if string(got) != tt.want {
				t.Errorf("got %s, want %s", got, tt.want)
			}
		})
	}
}

var cmpEmpty = cmp.Transformer("nilEmpty", func(s []string) []string {
	if len(s) == 0 {
		return nil
	}
	return s
})
