package main

import (
	"testing"

	"github.com/rs/zerolog"
)

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

// TestListenBeyondLoopbackNeedsTheFlag: hbgraph authenticates nobody, so it
// serves beyond loopback, on either listener, only when told to.
func TestListenBeyondLoopbackNeedsTheFlag(t *testing.T) {
	for _, tc := range []struct {
		args []string
		ok   bool
	}{
		{nil, true},
		{[]string{"--listen", ":8080"}, false},
		{[]string{"--listen", "0.0.0.0:8080"}, false},
		{[]string{"--admin-listen", "10.1.2.3:9090"}, false},
		{[]string{"--listen", "[::1]:8080", "--admin-listen", "localhost:9090"}, true},
		{[]string{"--listen", ":8080", "--insecure-no-auth"}, true},
	} {
		cfg, err := parseConfig(tc.args)
		if err != nil {
			t.Fatal(err)
		}
		if err := checkListen(cfg, zerolog.Nop()); (err == nil) != tc.ok {
			t.Errorf("%q: %v, want ok=%v", tc.args, err, tc.ok)
		}
	}
	if _, err := parseConfig([]string{"--cors-origins", "app.example.com"}); err == nil {
		t.Error("an origin without a scheme was accepted")
	}
}
