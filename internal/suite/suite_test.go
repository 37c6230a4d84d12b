package suite

import "testing"

// TestPickRotates: without EnvFull each class runs one material, the
// materials taken in turn; with it every class runs every material.
func TestPickRotates(t *testing.T) {
	t.Setenv(EnvFull, "")
	taken := map[int]int{}
	for class := range 6 {
		n := 0
		for m := range 4 {
			if Pick(class, m, 4) {
				n++
				taken[m]++
			}
		}
		if n != 1 {
			t.Errorf("class %d runs %d materials, want 1", class, n)
		}
	}
	if len(taken) != 4 {
		t.Errorf("materials taken: %v, want all 4", taken)
	}
	if !Pick(3, 0, 1) {
		t.Error("the one material of a class was not picked")
	}
	for _, v := range []string{"1", "yes"} {
		t.Setenv(EnvFull, v)
		if !Full() || !Pick(1, 0, 4) || !Pick(1, 3, 4) {
			t.Errorf("%s=%s: not every material picked", EnvFull, v)
		}
	}
	t.Setenv(EnvFull, "0")
	if Full() {
		t.Errorf("%s=0 taken as full", EnvFull)
	}
}
