package auth

import (
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/lestrrat-go/jwx/v3/jwa"
	"github.com/lestrrat-go/jwx/v3/jwk"
	"github.com/lestrrat-go/jwx/v3/jws"
	"github.com/rs/zerolog"
)

// TestVerifyRefusals: each way a token can be wrong is refused with its
// own reason, and a message that names no library, Go type or claim
// value.
func TestVerifyRefusals(t *testing.T) {
	dir := t.TempDir()
	key := rsaKey(t, "k1")
	other := rsaKey(t, "k1") // the same kid, another key
	stranger := rsaKey(t, "k9")
	var strangerRaw rsa.PrivateKey // without a kid
	if err := jwk.Export(stranger, &strangerRaw); err != nil {
		t.Fatal(err)
	}
	pub, _ := key.PublicKey()
	set := jwk.NewSet()
	set.AddKey(pub)
	b, _ := json.Marshal(set)
	jwksFile := filepath.Join(dir, "jwks.json")
	os.WriteFile(jwksFile, b, 0o600)
	secret := strings.Repeat("s", 40)
	secretFile := filepath.Join(dir, "secret")
	os.WriteFile(secretFile, []byte(secret), 0o600)
	v, err := NewVerifier(t.Context(), Config{JWKSFile: jwksFile, HS256SecretFile: secretFile, Issuer: "https://idp/", Audience: "hbgraph",
		Leeway: time.Second, MaxTokenLifetime: 2 * time.Hour}, zerolog.Nop())
	if err != nil {
		t.Fatal(err)
	}

	now := time.Now().Unix()
	claims := func(edit func(map[string]any)) []byte {
		c := map[string]any{"sub": "alice", "iss": "https://idp/", "aud": "hbgraph", "iat": now - 60, "exp": now + 3600}
		if edit != nil {
			edit(c)
		}
		b, _ := json.Marshal(c)
		return b
	}
	sign := func(k any, alg jwa.SignatureAlgorithm, header map[string]any, payload []byte) string {
		h := jws.NewHeaders()
		for name, value := range header {
			if err := h.Set(name, value); err != nil {
				t.Fatal(err)
			}
		}
		s, err := jws.Sign(payload, jws.WithKey(alg, k, jws.WithProtectedHeaders(h)))
		if err != nil {
			t.Fatal(err)
		}
		return string(s)
	}
	rs := func(header map[string]any, payload []byte) string { return sign(key, jwa.RS256(), header, payload) }
	kid := map[string]any{"kid": "k1"}
	withSub := func(sub string) []byte { return claims(func(c map[string]any) { c["sub"] = sub }) }
	rawSub := func(raw string) []byte { // sub's JSON text as given, not re-encoded
		return []byte(`{"sub":"` + raw + `","iss":"https://idp/","aud":"hbgraph","exp":` + jsonNumber(now+3600) + `}`)
	}
	enc := base64.RawURLEncoding

	for name, tc := range map[string]struct {
		token, reason string
	}{
		"valid, kid":                 {rs(kid, claims(nil)), ""},
		"valid, no kid":              {rs(nil, claims(nil)), ""},
		"valid, HS256":               {sign([]byte(secret), jwa.HS256(), nil, claims(nil)), ""},
		"valid, no iat, 1 h":         {rs(kid, claims(func(c map[string]any) { delete(c, "iat") })), ""},
		"valid, sub of 256 bytes":    {rs(kid, withSub(strings.Repeat("a", 256))), ""},
		"valid, sub in Unicode":      {rs(kid, withSub("auth0|zoë-日本")), ""},
		"not a JWT":                  {"hello", ReasonMalformed},
		"JSON serialization":         {`{"payload":"e30","signatures":[]}`, ReasonMalformed},
		"header not JSON":            {enc.EncodeToString([]byte("{")) + ".e30.c2ln", ReasonMalformed},
		"alg none":                   {enc.EncodeToString([]byte(`{"alg":"none"}`)) + "." + enc.EncodeToString(claims(nil)) + ".", ReasonAlgorithm},
		"crit unknown":               {rs(map[string]any{"kid": "k1", "crit": []string{"x-evil"}, "x-evil": 1}, claims(nil)), ReasonCrit},
		"crit, no kid":               {rs(map[string]any{"crit": []string{"exp"}, "exp": 1}, claims(nil)), ReasonCrit},
		"crit b64":                   {rs(map[string]any{"kid": "k1", "crit": []string{"b64"}, "b64": true}, claims(nil)), ReasonCrit},
		"crit on HS256":              {sign([]byte(secret), jwa.HS256(), map[string]any{"crit": []string{"x"}, "x": 1}, claims(nil)), ReasonCrit},
		"kid names no key":           {sign(stranger, jwa.RS256(), map[string]any{"kid": "k9"}, claims(nil)), ReasonUnknownKeyID},
		"kid of our key, other key":  {sign(other, jwa.RS256(), kid, claims(nil)), ReasonSignature},
		"no kid, other key":          {sign(&strangerRaw, jwa.RS256(), nil, claims(nil)), ReasonSignature},
		"HS256 with another secret":  {sign([]byte(strings.Repeat("t", 40)), jwa.HS256(), nil, claims(nil)), ReasonSignature},
		"claims not an object":       {rs(kid, []byte(`[1]`)), ReasonClaims},
		"exp a string":               {rs(kid, claims(func(c map[string]any) { c["exp"] = "tomorrow" })), ReasonClaims},
		"no exp":                     {rs(kid, claims(func(c map[string]any) { delete(c, "exp") })), ReasonNoExpiry},
		"no exp, HS256":              {sign([]byte(secret), jwa.HS256(), nil, claims(func(c map[string]any) { delete(c, "exp") })), ReasonNoExpiry},
		"expired":                    {rs(kid, claims(func(c map[string]any) { c["exp"] = now - 60 })), ReasonExpired},
		"not yet valid":              {rs(kid, claims(func(c map[string]any) { c["nbf"] = now + 600 })), ReasonNotYetValid},
		"issued in the future":       {rs(kid, claims(func(c map[string]any) { c["iat"] = now + 600 })), ReasonIssuedInFuture},
		"wrong issuer":               {rs(kid, claims(func(c map[string]any) { c["iss"] = "https://evil/" })), ReasonIssuer},
		"wrong audience":             {rs(kid, claims(func(c map[string]any) { c["aud"] = "other" })), ReasonAudience},
		"lives 3 h":                  {rs(kid, claims(func(c map[string]any) { c["exp"] = now - 60 + 3*3600 })), ReasonLifetime},
		"no iat, expires in 3 h":     {rs(kid, claims(func(c map[string]any) { delete(c, "iat"); c["exp"] = now + 3*3600 })), ReasonLifetime},
		"no sub":                     {rs(kid, claims(func(c map[string]any) { delete(c, "sub") })), ReasonNoSubject},
		"sub with a newline":         {rs(kid, withSub("alice\nINFO forged line")), ReasonSubject},
		"sub with an ANSI escape":    {rs(kid, withSub("alice\x1b[31m")), ReasonSubject},
		"sub with NUL":               {rs(kid, withSub("alice\x00")), ReasonSubject},
		"sub with DEL":               {rs(kid, withSub("alice\x7f")), ReasonSubject},
		"sub with C1 (CSI)":          {rs(kid, withSub("alice\u009b")), ReasonSubject},
		"sub with RLO":               {rs(kid, withSub("alice\u202egnp.exe")), ReasonSubject},
		"sub with an isolate":        {rs(kid, withSub("alice\u2066")), ReasonSubject},
		"sub with ALM":               {rs(kid, withSub("alice\u061c")), ReasonSubject},
		"sub with a zero-width join": {rs(kid, withSub("al\u200dice")), ReasonSubject},
		"sub with U+2028":            {rs(kid, withSub("alice\u2028")), ReasonSubject},
		"sub of invalid UTF-8":       {rs(kid, rawSub("alice\xff")), ReasonSubject},
		"sub with a lone surrogate":  {rs(kid, rawSub(`alice\ud800`)), ReasonSubject},
		"sub of 257 bytes":           {rs(kid, withSub(strings.Repeat("a", 257))), ReasonSubject},
	} {
		p, err := v.Verify(t.Context(), tc.token)
		if tc.reason == "" {
			if err != nil || p.Subject == "" {
				t.Errorf("%s: %v", name, err)
			}
			continue
		}
		var te *TokenError
		if !errors.As(err, &te) || te.Reason != tc.reason || !errors.Is(err, ErrInvalidToken) {
			t.Errorf("%s: %v (%#v), want reason %s", name, err, te, tc.reason)
			continue
		}
		for _, leak := range []string{"jws", "jwt", "jwk", "*", "crypto/", "json:", "failed to", "x-evil", "evil"} {
			if strings.Contains(te.Message, leak) {
				t.Errorf("%s: the message %q carries %q", name, te.Message, leak)
			}
		}
	}
}

// TestMaxTokenLifetimeOff: with no bound a token that lives a year is
// accepted, as long as it carries exp.
func TestMaxTokenLifetimeOff(t *testing.T) {
	secretFile := filepath.Join(t.TempDir(), "secret")
	os.WriteFile(secretFile, []byte(strings.Repeat("s", 40)), 0o600)
	v, err := NewVerifier(t.Context(), Config{HS256SecretFile: secretFile}, zerolog.Nop())
	if err != nil {
		t.Fatal(err)
	}
	payload, _ := json.Marshal(map[string]any{"sub": "alice", "iat": time.Now().Unix(), "exp": time.Now().Add(365 * 24 * time.Hour).Unix()})
	tok, _ := jws.Sign(payload, jws.WithKey(jwa.HS256(), []byte(strings.Repeat("s", 40))))
	if _, err := v.Verify(t.Context(), string(tok)); err != nil {
		t.Error(err)
	}
	if _, err := NewVerifier(t.Context(), Config{HS256SecretFile: secretFile, MaxTokenLifetime: -time.Second}, zerolog.Nop()); err == nil {
		t.Error("a negative lifetime was accepted")
	}
}

func rsaKey(t *testing.T, kid string) jwk.Key {
	t.Helper()
	priv, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	k, err := jwk.Import(priv)
	if err != nil {
		t.Fatal(err)
	}
	k.Set(jwk.KeyIDKey, kid)
	return k
}

func jsonNumber(n int64) string { b, _ := json.Marshal(n); return string(b) }

// TestKidAndUnnamedKeys: PEM public keys have no id, so a kid cannot name
// them: a token with a kid is verified against them when no key has its
// id, and refused only if its signature does not verify.
func TestKidAndUnnamedKeys(t *testing.T) {
	dir := t.TempDir()
	priv, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	der, _ := x509.MarshalPKIXPublicKey(&priv.PublicKey)
	pemFile := filepath.Join(dir, "keys.pem")
	os.WriteFile(pemFile, pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: der}), 0o600)
	v, err := NewVerifier(t.Context(), Config{JWKSFile: pemFile}, zerolog.Nop())
	if err != nil {
		t.Fatal(err)
	}
	payload, _ := json.Marshal(map[string]any{"sub": "alice", "exp": time.Now().Add(time.Hour).Unix()})
	h := jws.NewHeaders()
	h.Set(jws.KeyIDKey, "idp-key-7")
	signed, _ := jws.Sign(payload, jws.WithKey(jwa.RS256(), priv, jws.WithProtectedHeaders(h)))
	if _, err := v.Verify(t.Context(), string(signed)); err != nil {
		t.Errorf("a kid with PEM keys: %v", err)
	}
	other, _ := rsa.GenerateKey(rand.Reader, 2048)
	signed, _ = jws.Sign(payload, jws.WithKey(jwa.RS256(), other, jws.WithProtectedHeaders(h)))
	var te *TokenError
	if _, err := v.Verify(t.Context(), string(signed)); !errors.As(err, &te) || te.Reason != ReasonSignature {
		t.Errorf("a kid with PEM keys, signed by another key: %v", err)
	}
}
