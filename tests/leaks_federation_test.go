package tests

import (
	"strings"
	"testing"
)

// TestAuthDirectivesOnlyWithAuthentication: _service's SDL carries
// @authenticated when authentication is configured, not when it is off
// (the `go run .` default, which @apollo/gateway must compose as it is);
// --federation-auth-directives, when given, decides either way. Issue 22,
// item 15.
func TestAuthDirectivesOnlyWithAuthentication(t *testing.T) {
	parallelTest(t)
	p := newIDP(t)
	for _, c := range []struct {
		name string
		args []string
		want bool
	}{
		{"authentication off", nil, false},
		{"authentication on", p.args(), true},
		{"authentication off, flag on", []string{"--federation-auth-directives"}, true},
		{"authentication on, flag off", append(p.args(), "--federation-auth-directives=false"), false},
	} {
		s := startServer(t, c.args...)
		var out struct {
			Service struct{ SDL string } `json:"_service"`
		}
		s.mustDo(t, `{ _service { sdl } }`, nil, &out)
		if got := strings.Contains(out.Service.SDL, "@authenticated"); got != c.want {
			t.Errorf("%s: @authenticated in the SDL: %v, want %v", c.name, got, c.want)
		}
		if !strings.Contains(out.Service.SDL, `type Node @key(fields: "id")`) {
			t.Errorf("%s: the SDL lost its entities:\n%s", c.name, out.Service.SDL)
		}
		s.stop(t)
	}
}
