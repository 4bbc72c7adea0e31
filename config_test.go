package main

import "testing"

// TestGCPercentDefaultsByCommand checks that repair collects at Go's default
// unless told otherwise, and everything else at defaultGCPercent.
func TestGCPercentDefaultsByCommand(t *testing.T) {
	for _, tc := range []struct {
		env  string // HBGRAPH_GC_PERCENT, "" for unset
		args []string
		want int
	}{
		{"", nil, defaultGCPercent},
		{"", []string{"import"}, defaultGCPercent},
		{"", []string{"repair"}, 100},
		{"", []string{"--gc-percent", "800", "repair"}, 800},
		{"", []string{"repair", "--gc-percent", "300"}, 300},
		{"", []string{"--gc-percent", "0", "repair"}, 0},
		{"200", []string{"repair"}, 200},
		{"200", nil, 200},
	} {
		if tc.env != "" {
			t.Setenv("HBGRAPH_GC_PERCENT", tc.env)
		}
		cfg, err := parseConfig(tc.args)
		if err != nil {
			t.Fatalf("%q: %v", tc.args, err)
		}
		if got := cfg.gcPercentFor(); got != tc.want {
			t.Errorf("HBGRAPH_GC_PERCENT=%q %q: gc percent %d, want %d", tc.env, tc.args, got, tc.want)
		}
	}
}
