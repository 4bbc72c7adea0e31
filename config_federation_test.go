package main

import "testing"

// TestAuthDirectivesFollowAuthentication: @authenticated is in _service's
// SDL by default only when authentication is configured; the flag (or its
// variable), when given, decides either way.
func TestAuthDirectivesFollowAuthentication(t *testing.T) {
	for _, tc := range []struct {
		name string
		args []string
		env  string
		want bool
	}{
		{"no authentication", nil, "", false},
		{"authentication", []string{"--auth-jwks-file", "keys.json"}, "", true},
		{"no authentication, forced on", []string{"--federation-auth-directives"}, "", true},
		{"authentication, forced off", []string{"--auth-jwks-file", "keys.json", "--federation-auth-directives=false"}, "", false},
		{"no authentication, on by variable", nil, "true", true},
		{"authentication, off by variable", []string{"--auth-hs256-secret-file", "secret"}, "false", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if tc.env != "" {
				t.Setenv("HBGRAPH_FEDERATION_AUTH_DIRECTIVES", tc.env)
			}
			cfg, err := parseConfig(tc.args)
			if err != nil {
				t.Fatal(err)
			}
			if got := cfg.authDirectives(); got != tc.want {
				t.Errorf("authDirectives() = %v, want %v", got, tc.want)
			}
		})
	}
}
