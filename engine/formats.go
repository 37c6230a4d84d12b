package engine

import (
	"fmt"
	"slices"
	"strings"

	"github.com/hashicorp/hcl/v2"

	"github.com/ctxhost/ctxhost/config"
	"github.com/ctxhost/ctxhost/sdk"
)

// resolveFormat returns the format an assembler block asks for: its HCL
// format, or the first format the assembler declares when the HCL leaves it
// out. A format the assembler does not declare is a diagnostic naming the
// declared ones. An assembler that declares no formats takes any format.
func resolveFormat(asm *config.Assembler, info sdk.AssemblerInfo) (string, hcl.Diagnostics) {
	if asm.Format == "" {
		if len(info.Formats) == 0 {
			return "", nil
		}
		return info.Formats[0].Name, nil
	}
	return asm.Format, checkFormat(asm.Format, asm.Name, info, asm.Range("format"))
}

// checkFormat reports format as a diagnostic at rng when the assembler
// (bound as name) declares formats and format is not one of them.
func checkFormat(format, name string, info sdk.AssemblerInfo, rng hcl.Range) hcl.Diagnostics {
	if len(info.Formats) == 0 || slices.ContainsFunc(info.Formats, func(f sdk.FormatInfo) bool { return f.Name == format }) {
		return nil
	}
	declared := make([]string, len(info.Formats))
	for i, f := range info.Formats {
		declared[i] = fmt.Sprintf("%q", f.Name)
	}
	return hcl.Diagnostics{{Severity: hcl.DiagError, Subject: rng.Ptr(),
		Summary: "Unsupported assembler format",
		Detail: fmt.Sprintf("Assembler %q (%s) does not offer format %q; it declares %s. Leave format out to use the first one.",
			name, info.Name, format, strings.Join(declared, ", "))}}
}

// checkAgentFormats reports every agent whose format its assembler does not
// declare; infos holds the launched assemblers' descriptions by HCL name.
func checkAgentFormats(agents []*config.Agent, infos map[string]sdk.AssemblerInfo) hcl.Diagnostics {
	var diags hcl.Diagnostics
	for _, ag := range agents {
		info, ok := infos[ag.Assembler]
		if !ok || ag.Format == "" {
			continue
		}
		diags = append(diags, checkFormat(ag.Format, ag.Assembler, info, ag.Range("format"))...)
	}
	return diags
}
