package main

import (
	"os"
	"regexp"
	"testing"
)

// TestMakeTestRunsStaticcheck: `make test` runs staticcheck, at a pinned
// version (a new release's new checks must not fail a build nobody
// changed).
func TestMakeTestRunsStaticcheck(t *testing.T) {
	b, err := os.ReadFile("Makefile")
	if err != nil {
		t.Fatal(err)
	}
	mk := string(b)
	if !regexp.MustCompile(`(?m)^test:.*\bstaticcheck\b`).MatchString(mk) {
		t.Error("make test does not run the staticcheck target")
	}
	if !regexp.MustCompile(`(?m)^STATICCHECK := honnef\.co/go/tools/cmd/staticcheck@v\d+\.\d+\.\d+$`).MatchString(mk) ||
		!regexp.MustCompile(`(?m)^staticcheck:\n\t\$\(GO\) run \$\(STATICCHECK\) `).MatchString(mk) {
		t.Error("the staticcheck target does not run a pinned staticcheck")
	}
}
