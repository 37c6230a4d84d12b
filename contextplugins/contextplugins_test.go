package contextplugins

import (
	"slices"
	"testing"

	"github.com/ctxhost/ctxhost/config"
)

// The configuration accepts exactly the plugins this package can make.
func TestNamesMatchConfig(t *testing.T) {
	if got, want := Names(), slices.Sorted(slices.Values(config.BuiltinPlugins)); !slices.Equal(got, want) {
		t.Fatalf("built-in plugins %v, configuration accepts %v", got, want)
	}
	for _, n := range Names() {
		p, err := New(n)
		if err != nil {
			t.Fatal(err)
		}
		if info := p.Describe(); info.Name == "" {
			t.Errorf("%s describes itself without a name", n)
		}
	}
	if _, err := New("nope"); err == nil {
		t.Fatal("an unknown name made a plugin")
	}
}
