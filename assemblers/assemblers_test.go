package assemblers

import (
	"slices"
	"testing"

	"github.com/ctxhost/ctxhost/config"
)

// The configuration accepts exactly the assemblers this package can make.
func TestNamesMatchConfig(t *testing.T) {
	if got, want := Names(), slices.Sorted(slices.Values(config.BuiltinAssemblers)); !slices.Equal(got, want) {
		t.Fatalf("built-in assemblers %v, configuration accepts %v", got, want)
	}
	for _, n := range Names() {
		a, err := New(n)
		if err != nil {
			t.Fatal(err)
		}
		if info := a.Describe(); len(info.Formats) == 0 {
			t.Errorf("%s declares no formats", n)
		}
	}
	if _, err := New("nope"); err == nil {
		t.Fatal("an unknown name made an assembler")
	}
}
