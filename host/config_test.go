package host

import (
	"strings"
	"testing"

	"github.com/ctxhost/ctxhost/tokenizer"
)

func TestConfigValidate(t *testing.T) {
	f := newFake("f", 5, true)
	tests := []struct {
		name string
		cfg  Config
		want string // substring of the error; empty: valid
	}{
		{"defaults", Config{}, ""},
		{"negative window", Config{Window: -1}, "window must be positive"},
		{"reserved too big", Config{Window: 1000, Reserved: 1000}, "reserved (1000)"},
		{"unknown encoding", Config{Encoding: "p50k"}, `unknown encoding "p50k"`},
		{"thresholds reversed", Config{Thresholds: Thresholds{Warning: 0.9, Critical: 0.7}}, "warning (0.9) < critical (0.7)"},
		{"critical above 1", Config{Thresholds: Thresholds{Warning: 0.9, Critical: 1.5}}, "<= 1"},
		{"unknown strategy", Config{Strategy: StrategyConfig{Name: "eager"}}, `unknown strategy "eager"`},
		{"target above 1", Config{Strategy: StrategyConfig{Target: 1.5}}, "target must be in (0, 1]"},
		{"history priority", Config{History: HistoryConfig{Priority: intp(101)}}, "history priority"},
		{"plugin without name", Config{Plugins: []PluginBinding{{Plugin: f}}}, "name is empty"},
		{"plugin twice", Config{Plugins: []PluginBinding{bind("f", f), bind("f", f)}}, `"f": bound twice`},
		{"plugin nil", Config{Plugins: []PluginBinding{{Name: "x"}}}, `"x": no plugin`},
		{"plugin priority", Config{Plugins: []PluginBinding{{Name: "f", Plugin: f, Priority: intp(-1)}}}, "priority must be 0..100"},
		{"format without assembler", Config{Format: "gemini"}, "without an assembler"},
		{"approximate", Config{Encoding: tokenizer.Approximate, Window: 8000, Reserved: 500}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.cfg.WithDefaults().Validate()
			switch {
			case tt.want == "" && err != nil:
				t.Errorf("unexpected error: %v", err)
			case tt.want != "" && (err == nil || !strings.Contains(err.Error(), tt.want)):
				t.Errorf("err = %v, want one containing %q", err, tt.want)
			}
		})
	}
}

func TestConfigDefaults(t *testing.T) {
	c := Config{}.WithDefaults()
	if c.Window != DefaultWindow || c.Reserved != DefaultReserved || c.Encoding != DefaultEncoding ||
		c.Thresholds != (Thresholds{0.7, 0.9}) || c.Strategy != (StrategyConfig{StrategyProactive, 0.6, 4, 3, 3, 0}) || *c.History.Priority != 6 {
		t.Errorf("defaults %+v", c)
	}
}

func TestBudgetOf(t *testing.T) {
	cfg := Config{Window: 1100, Reserved: 100, Thresholds: Thresholds{0.7, 0.9}}
	cs := []countedComponent{{tokens: 300}, {tokens: 400}}
	tests := []struct {
		cal        float64
		calibrated int
		status     string
	}{{1, 700, "warning"}, {1.3, 910, "critical"}, {0.5, 350, "ok"}}
	for _, tt := range tests {
		b := budgetOf(cfg, tt.cal, cs)
		if b.Used != 700 || b.CalibratedUsed != tt.calibrated || b.Status != tt.status || b.Available != 1000 {
			t.Errorf("calibration %g: %+v", tt.cal, b)
		}
	}
}
