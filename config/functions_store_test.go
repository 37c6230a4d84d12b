package config

import "testing"

func TestResolveStore(t *testing.T) {
	for _, tc := range []struct{ spec, want string }{
		{"", ""},
		{"state/", "/cfg/state/"},
		{"sessions.db", "/cfg/sessions.db"},
		{"/abs/state/", "/abs/state/"},
		{"sqlite:data/s.db", "sqlite:/cfg/data/s.db"},
		{"file:state", "file:/cfg/state"},
		{"postgres://u@h:5432/db?search_path=x&sslmode=disable", "postgres://u@h:5432/db?search_path=x&sslmode=disable"},
		{"POSTGRESQL://h/db", "POSTGRESQL://h/db"},
	} {
		if got := resolveStore("/cfg", tc.spec); got != tc.want {
			t.Errorf("resolveStore(%q) = %q, want %q", tc.spec, got, tc.want)
		}
	}
}
