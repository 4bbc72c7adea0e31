package tests

import (
	"crypto"
	"crypto/hmac"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/lestrrat-go/jwx/v3/jwk"
)

// rsaSigner signs a forged token's input with key's private RSA key
// (RS256), so that only what the test put in the header and payload is
// wrong, never the signature.
func rsaSigner(t testing.TB, key jwk.Key) func([]byte) []byte {
	t.Helper()
	var priv rsa.PrivateKey
	if err := jwk.Export(key, &priv); err != nil {
		t.Fatal(err)
	}
	return func(input []byte) []byte {
		sum := sha256.Sum256(input)
		sig, err := rsa.SignPKCS1v15(rand.Reader, &priv, crypto.SHA256, sum[:])
		if err != nil {
			t.Fatal(err)
		}
		return sig
	}
}

func hmacSigner(secret []byte) func([]byte) []byte {
	return func(input []byte) []byte {
		m := hmac.New(sha256.New, secret)
		m.Write(input)
		return m.Sum(nil)
	}
}

// payloadWith is a valid payload for sub (scope admin) edited by edit.
func payloadWith(sub string, edit func(map[string]any)) map[string]any {
	pl := validPayload(sub)
	if edit != nil {
		edit(pl)
	}
	return pl
}

// tokenInternals are what a 401's message must never carry: a library's name
// or error chain, a Go type, a claim's value from the token.
var tokenInternals = []string{"jws", "jwt.", "jwk", "*", "crypto/", "json:", "failed to", "verification error", "x-evil"}

// TestHardenedTokensRefused: tokens correctly signed by the provider's key
// but without exp, with a crit header, with a kid naming no key, or with a
// subject that cannot name an owner are refused with 401, WWW-Authenticate
// and UNAUTHENTICATED, with a message in our words saying which check
// failed, and write nothing. (All were accepted at 645e710.)
func TestHardenedTokensRefused(t *testing.T) {
	parallelTest(t)
	p := newIDP(t)
	s := startServer(t, p.args()...)
	rs := rsaSigner(t, p.rsaKey)
	kid := map[string]any{"alg": "RS256", "typ": "JWT", "kid": "rsa-1"}
	header := func(extra map[string]any) map[string]any {
		h := map[string]any{"alg": "RS256", "typ": "JWT", "kid": "rsa-1"}
		for k, v := range extra {
			h[k] = v
		}
		return h
	}
	// The forged tokens are signed right: the same header and payload
	// with a valid sub verify.
	s.as(t, forged(kid, payloadWith("alice", nil), rs), `mutation { createNode(id: "ok") { id } }`, nil).ok(t, nil)

	for name, tc := range map[string]struct{ token, says string }{
		"no exp":             {forged(kid, payloadWith("alice", func(pl map[string]any) { delete(pl, "exp") }), rs), "no expiry (exp)"},
		"no exp, no kid":     {forged(map[string]any{"alg": "RS256"}, payloadWith("alice", func(pl map[string]any) { delete(pl, "exp") }), rs), "no expiry (exp)"},
		"crit unknown":       {forged(header(map[string]any{"crit": []string{"x-evil"}, "x-evil": true}), payloadWith("alice", nil), rs), "critical parameters (crit)"},
		"crit empty":         {forged(header(map[string]any{"crit": []string{}}), payloadWith("alice", nil), rs), ""},
		"kid names no key":   {forged(header(map[string]any{"kid": "no-such-key"}), payloadWith("alice", nil), rs), "key id (kid) names no key"},
		"sub with a newline": {forged(kid, payloadWith("alice\n{\"level\":\"error\"}", nil), rs), "subject (sub)"},
		"sub with ANSI":      {forged(kid, payloadWith("alice\x1b[2J", nil), rs), "subject (sub)"},
		"sub with NUL":       {forged(kid, payloadWith("alice\x00", nil), rs), "subject (sub)"},
		"sub with RLO":       {forged(kid, payloadWith("alice\u202etxt.exe", nil), rs), "subject (sub)"},
		"sub with LRI":       {forged(kid, payloadWith("\u2066alice", nil), rs), "subject (sub)"},
		"sub with ZWSP":      {forged(kid, payloadWith("al\u200bice", nil), rs), "subject (sub)"},
		"sub over 256 bytes": {forged(kid, payloadWith(strings.Repeat("a", 257), nil), rs), "subject (sub)"},
		"sub empty":          {forged(kid, payloadWith("", nil), rs), "no subject (sub)"},
	} {
		before := s.snapshot(t, p.admin(), "x", "ok")
		r := s.as(t, tc.token, `mutation { createNode(id: "x") { id } }`, nil)
		if r.Status != http.StatusUnauthorized || len(r.Errors) != 1 || r.Errors[0].Code() != "UNAUTHENTICATED" ||
			!strings.Contains(r.Header.Get("WWW-Authenticate"), `error="invalid_token"`) {
			t.Errorf("%s: %d, WWW-Authenticate %q: %s", name, r.Status, r.Header.Get("WWW-Authenticate"), r.Body)
			continue
		}
		if !strings.Contains(r.Errors[0].Message, tc.says) {
			t.Errorf("%s: message %q does not say %q", name, r.Errors[0].Message, tc.says)
		}
		for _, leak := range tokenInternals {
			if strings.Contains(r.Errors[0].Message, leak) {
				t.Errorf("%s: message %q carries %q", name, r.Errors[0].Message, leak)
			}
		}
		if after := s.snapshot(t, p.admin(), "x", "ok"); after != before {
			t.Errorf("%s: refused but the data changed:\nbefore %s\nafter  %s", name, before, after)
		}
	}
}

// TestRefusalMessagesSayWhy: each classic refusal names the check that
// failed in our words (the issuer and audience, public configuration, are
// named), never jwx's error chain.
func TestRefusalMessagesSayWhy(t *testing.T) {
	parallelTest(t)
	p := newIDP(t)
	s := startServer(t, p.args()...)
	parts := strings.Split(p.user("alice"), ".")
	for name, tc := range map[string]struct{ token, says string }{
		"expired":        {p.token(p.rsaKey, claims{sub: "alice", exp: time.Now().Add(-5 * time.Minute)}), "expired"},
		"not yet valid":  {p.token(p.rsaKey, claims{sub: "alice", nbf: time.Now().Add(5 * time.Minute)}), "not valid yet"},
		"wrong issuer":   {p.token(p.rsaKey, claims{sub: "alice", iss: "https://evil.test/"}), `issuer (iss) is not "` + testIssuer + `"`},
		"wrong audience": {p.token(p.rsaKey, claims{sub: "alice", aud: "someone-else"}), `audience (aud) does not include "` + testAudience + `"`},
		"bad signature":  {parts[0] + "." + parts[1] + "." + strings.Repeat("A", len(parts[2])), "signature does not verify"},
		"alg none":       {forged(map[string]any{"alg": "none"}, validPayload("root"), nil), "alg none"},
		"not a JWT":      {"hello", "not a signed JWT"},
		"unknown kid":    {p.token(p.ecKey, claims{sub: "alice"}), "key id (kid)"},
	} {
		r := s.as(t, tc.token, `{ __typename }`, nil)
		if r.Status != http.StatusUnauthorized || len(r.Errors) != 1 {
			t.Errorf("%s: %d %s", name, r.Status, r.Body)
			continue
		}
		msg := r.Errors[0].Message
		if !strings.Contains(msg, tc.says) {
			t.Errorf("%s: message %q does not say %q", name, msg, tc.says)
		}
		for _, leak := range tokenInternals {
			if strings.Contains(msg, leak) {
				t.Errorf("%s: message %q carries %q", name, msg, leak)
			}
		}
	}
}

// TestKidSelectsTheKey: a token whose kid names no key is refused even
// though its signature verifies with a key the set holds, and however
// many such tokens come, the JWKS is fetched again at most once a second.
func TestKidSelectsTheKey(t *testing.T) {
	parallelTest(t)
	p := newIDP(t)
	s := startServer(t, p.args()...)
	rs := rsaSigner(t, p.rsaKey)
	p.mu.Lock()
	fetchesBefore := p.fetches
	p.mu.Unlock()
	start := time.Now()
	for i := range 20 {
		token := forged(map[string]any{"alg": "RS256", "kid": "made-up-" + string(rune('a'+i))}, validPayload("root"), rs)
		if r := s.as(t, token, `mutation { createNode(id: "x") { id } }`, nil); r.Status != http.StatusUnauthorized ||
			!strings.Contains(r.Errors[0].Message, "key id (kid)") {
			t.Fatalf("kid naming no key, signed by the set's key: %d %s", r.Status, r.Body)
		}
	}
	p.mu.Lock()
	fetched := p.fetches - fetchesBefore
	p.mu.Unlock()
	if allowed := int(time.Since(start)/time.Second) + 1; fetched > allowed {
		t.Errorf("20 unknown kids in %v made %d JWKS fetches, at most %d allowed", time.Since(start), fetched, allowed)
	}
	// No kid at all: every key is tried, as before.
	s.as(t, forged(map[string]any{"alg": "RS256"}, validPayload("root"), rs), `{ __typename }`, nil).ok(t, nil)
}

// TestTokensMustExpire: on an HS256 server too, a token without exp is
// refused; with no --auth-max-token-lifetime any exp is accepted, and with
// one, tokens that live longer (exp - iat, or exp - now without iat) are
// refused and shorter ones accepted.
func TestTokensMustExpire(t *testing.T) {
	parallelTest(t)
	secret := []byte(strings.Repeat("k", 40))
	secretFile := filepath.Join(t.TempDir(), "secret")
	if err := os.WriteFile(secretFile, secret, 0o600); err != nil {
		t.Fatal(err)
	}
	hs := map[string]any{"alg": "HS256", "typ": "JWT"}
	now := time.Now().Unix()
	check := func(s *server, cases map[string]struct {
		edit func(map[string]any)
		says string // "": accepted
	}) {
		for name, tc := range cases {
			r := s.as(t, forged(hs, payloadWith("alice", tc.edit), hmacSigner(secret)), `{ __typename }`, nil)
			if tc.says == "" {
				if r.Status != http.StatusOK {
					t.Errorf("%s: %d %s", name, r.Status, r.Body)
				}
				continue
			}
			if r.Status != http.StatusUnauthorized || r.Errors[0].Code() != "UNAUTHENTICATED" || !strings.Contains(r.Errors[0].Message, tc.says) {
				t.Errorf("%s: %d %s, want 401 saying %q", name, r.Status, r.Body, tc.says)
			}
		}
	}
	unbounded := startServer(t, "--auth-hs256-secret-file", secretFile)
	check(unbounded, map[string]struct {
		edit func(map[string]any)
		says string
	}{
		"no exp":          {func(pl map[string]any) { delete(pl, "exp") }, "no expiry (exp)"},
		"no exp, no iat":  {func(pl map[string]any) { delete(pl, "exp"); delete(pl, "iat") }, "no expiry (exp)"},
		"exp null":        {func(pl map[string]any) { pl["exp"] = nil }, "exp"},
		"exp in 10 years": {func(pl map[string]any) { pl["exp"] = now + 10*365*86400 }, ""},
	})
	bounded := startServer(t, "--auth-hs256-secret-file", secretFile, "--auth-max-token-lifetime", "1h")
	check(bounded, map[string]struct {
		edit func(map[string]any)
		says string
	}{
		"50 min":                {func(pl map[string]any) { pl["exp"] = now + 50*60 }, ""},
		"no iat, 50 min":        {func(pl map[string]any) { delete(pl, "iat"); pl["exp"] = now + 50*60 }, ""},
		"no exp":                {func(pl map[string]any) { delete(pl, "exp") }, "no expiry (exp)"},
		"iat to exp 2 h":        {func(pl map[string]any) { pl["iat"] = now - 60; pl["exp"] = now - 60 + 7200 }, "lives longer (exp - iat) than the 1h0m0s"},
		"no iat, expires in 2h": {func(pl map[string]any) { delete(pl, "iat"); pl["exp"] = now + 7200 }, "lives longer"},
		"exp in 100 years":      {func(pl map[string]any) { pl["exp"] = now + 100*365*86400 }, "lives longer"},
	})
}

// TestRefusedTokensAreRateLimited: under --rate-limit 1 --rate-burst 3,
// 300 bad-signature tokens from one address get at most a few 401s, then
// 429 RATE_LIMITED with Retry-After (their signatures unchecked); valid
// tokens of many subjects from that address before the flood cost it
// nothing; every 401 and 429 log line carries its code and reason.
func TestRefusedTokensAreRateLimited(t *testing.T) {
	parallelTest(t)
	p := newIDP(t)
	s := startServer(t, append(p.args(), "--rate-limit", "1", "--rate-burst", "3", "--log-level", "info")...)
	for _, sub := range []string{"a", "b", "c", "d", "e", "f", "g", "h"} {
		s.as(t, p.user(sub), `{ __typename }`, nil).ok(t, nil)
	}
	parts := strings.Split(p.user("alice"), ".")
	bad := parts[0] + "." + parts[1] + "." + strings.Repeat("A", len(parts[2]))
	statuses := map[int]int{}
	start := time.Now()
	var last *gqlResponse
	for range 300 {
		last = s.as(t, bad, `{ __typename }`, nil)
		statuses[last.Status]++
	}
	// 3 at once, and one more a second.
	if most := 3 + int(time.Since(start).Seconds()) + 1; statuses[http.StatusUnauthorized] > most || statuses[http.StatusTooManyRequests] != 300-statuses[http.StatusUnauthorized] {
		t.Errorf("300 bad tokens in %v: %v, want at most %d 401s and the rest 429", time.Since(start), statuses, most)
	}
	if last.Status != http.StatusTooManyRequests || last.Header.Get("Retry-After") == "" || last.Errors[0].Code() != "RATE_LIMITED" {
		t.Errorf("the last bad token: %d, Retry-After %q: %s", last.Status, last.Header.Get("Retry-After"), last.Body)
	}
	if n := s.metrics(t)["hbgraph_rate_limited_total"]; n < 290 {
		t.Errorf("hbgraph_rate_limited_total = %v", n)
	}

	// The log lines: 401s say UNAUTHENTICATED and why, 429s RATE_LIMITED.
	expired := p.token(p.rsaKey, claims{sub: "zed", exp: time.Now().Add(-time.Hour)})
	h := http.Header{"Authorization": {"Bearer " + expired}, "X-Request-Id": {"expired-log-check"}}
	other := startServer(t, append(p.args(), "--log-level", "info")...)
	if r := other.postRaw(t, []byte(`{"query":"{ __typename }"}`), h); r.Status != http.StatusUnauthorized {
		t.Fatalf("expired token: %d %s", r.Status, r.Body)
	}
	if line := logLine(t, other, "expired-log-check"); line == nil || !sameStrings(line["error_codes"], "UNAUTHENTICATED") || line["refused"] != "expired" {
		t.Errorf("a 401's log line: %v", line)
	}
	h = http.Header{"Authorization": {"Bearer " + bad}, "X-Request-Id": {"limited-log-check"}}
	if r := s.postRaw(t, []byte(`{"query":"{ __typename }"}`), h); r.Status != http.StatusTooManyRequests {
		t.Fatalf("one more bad token: %d %s", r.Status, r.Body)
	}
	if line := logLine(t, s, "limited-log-check"); line == nil || !sameStrings(line["error_codes"], "RATE_LIMITED") {
		t.Errorf("a 429's log line: %v", line)
	}
	if strings.Contains(s.out.String(), parts[1]) || strings.Contains(other.out.String(), strings.Split(expired, ".")[2]) {
		t.Error("the log carries a token")
	}
}

// logLine is the "graphql" log line of the request with id, waiting up to
// 5 s for it.
func logLine(t testing.TB, s *server, id string) map[string]any {
	t.Helper()
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		for _, l := range strings.Split(s.out.String(), "\n") {
			var m map[string]any
			if json.Unmarshal([]byte(l), &m) == nil && m["request_id"] == id && m["message"] == "graphql" {
				return m
			}
		}
	}
	return nil
}

func sameStrings(v any, want ...string) bool {
	list, _ := v.([]any)
	if len(list) != len(want) {
		return false
	}
	for i, w := range want {
		if list[i] != w {
			return false
		}
	}
	return true
}
