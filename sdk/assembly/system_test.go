package assembly

import "testing"

// TestSystemBody is the table of SystemBody's trim rules.
func TestSystemBody(t *testing.T) {
	tests := []struct {
		name         string
		instruction  string
		instructFile string
		want         string
	}{
		{"both empty", "", "", ""},
		{"both whitespace-only", "  \n\t", " \n ", ""},
		{"only system instruction", "  Be brief.\n", "", "Be brief."},
		{"only instruction file", "", "\nRules:\n- cite sources\n\n", "Rules:\n- cite sources"},
		{"both present", " Be brief. ", "\nRules.\n", "Be brief.\n\nRules."},
		{"whitespace-only instruction skipped", "\t \n", "Rules.", "Rules."},
		{"whitespace-only file skipped", "Be brief.", "   ", "Be brief."},
		{"inner blank lines kept", "a\n\n\nb", "c", "a\n\n\nb\n\nc"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := SystemBody(tt.instruction, tt.instructFile); got != tt.want {
				t.Errorf("SystemBody(%q, %q) = %q, want %q", tt.instruction, tt.instructFile, got, tt.want)
			}
		})
	}
}

func TestSystemBodyNoParts(t *testing.T) {
	if got := SystemBody(); got != "" {
		t.Errorf("SystemBody() = %q, want empty", got)
	}
}

func TestSections(t *testing.T) {
	tests := []struct {
		name string
		add  [][2]string
		want string
	}{
		{"none", nil, ""},
		{"empty bodies are not emitted", [][2]string{{"[TEAM_TASK]", ""}, {"[CONTEXT]", " \n "}}, ""},
		{"one", [][2]string{{"[MESSAGE]", " hi\n"}}, "[MESSAGE]\nhi"},
		{"skips the empty one in the middle", [][2]string{{"[SYSTEM]", "s"}, {"[TEAM_TASK]", ""}, {"[MESSAGE]", "m"}}, "[SYSTEM]\ns\n\n[MESSAGE]\nm"},
		{"headerless body", [][2]string{{"", "plain"}, {"B:", "b"}}, "plain\n\nB:\nb"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var s Sections
			for _, a := range tt.add {
				s.Add(a[0], a[1])
			}
			if got := s.String(); got != tt.want {
				t.Errorf("got %q, want %q", got, tt.want)
			}
		})
	}
}
