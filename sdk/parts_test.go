package sdk

import (
	"encoding/json"
	"strings"
	"testing"
)

// TestToolsTextCanonical: one schema spelled two ways gives one text;
// large numbers keep their digits; bad tools are refused.
func TestToolsTextCanonical(t *testing.T) {
	a := RequestTools{Tools: []ToolDefinition{{Name: "f", Parameters: json.RawMessage(`{ "type":"object", "properties":{"n":{"type":"integer","maximum":9007199254740993}} }`)}}}
	b := RequestTools{Tools: []ToolDefinition{{Name: "f", Parameters: json.RawMessage(`{"properties":{"n":{"maximum":9007199254740993,"type":"integer"}},"type":"object"}`)}}}
	ta, err := ToolsText(a)
	if err != nil {
		t.Fatal(err)
	}
	tb, _ := ToolsText(b)
	if ta != tb || !strings.Contains(ta, "9007199254740993") {
		t.Errorf("canonical texts differ or lost digits:\n%s\n%s", ta, tb)
	}
	bad := []RequestTools{
		{Tools: []ToolDefinition{{Name: ""}}},
		{Tools: []ToolDefinition{{Name: "f"}, {Name: "f"}}},
		{Tools: []ToolDefinition{{Name: "f", Parameters: json.RawMessage(`[1]`)}}},
		{ToolChoice: &ToolChoice{Mode: ToolChoiceTool, Name: "missing"}},
		{ToolChoice: &ToolChoice{Mode: "sometimes"}},
		{ResponseFormat: &ResponseFormat{Schema: json.RawMessage(`"x"`)}},
	}
	for i, r := range bad {
		if err := r.Check(); err == nil {
			t.Errorf("bad tools %d accepted: %+v", i, r)
		}
	}
}

// TestImageTokens pins the providers' published rules.
func TestImageTokens(t *testing.T) {
	for _, tc := range []struct {
		rule   string
		w, h   int
		detail string
		want   int
	}{
		{MediaAnthropic, 1000, 1000, "", 1334},     // 1e6/750
		{MediaAnthropic, 1092, 1092, "", 1590},     // the largest square under the cap
		{MediaAnthropic, 3000, 3000, "", 1600},     // scaled down to the cap
		{MediaOpenAI, 1024, 1024, "", 765},         // 768² -> 4 tiles
		{MediaOpenAI, 2048, 4096, "", 1105},        // 1024x2048 -> 768x1536 -> 6 tiles
		{MediaOpenAI, 4000, 3000, "low", 85},       // low detail
		{MediaGemini, 300, 300, "", 258},           // small: one
		{MediaGemini, 1920, 1080, "", 258 * 3 * 2}, // 768-px tiles
		{"", 800, 600, "", 0},                      // a text format sends no image
	} {
		if got := ImageTokens(tc.rule, tc.w, tc.h, tc.detail); got != tc.want {
			t.Errorf("ImageTokens(%s, %dx%d, %q) = %d, want %d", tc.rule, tc.w, tc.h, tc.detail, got, tc.want)
		}
	}
}
