package auth

import (
	"context"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/lestrrat-go/jwx/v3/jwa"
	"github.com/lestrrat-go/jwx/v3/jwt"
	"github.com/rs/zerolog"
)

func TestMayWrite(t *testing.T) {
	alice := Principal{Subject: "alice"}
	admin := Principal{Subject: "root", Admin: true}
	for _, tc := range []struct {
		name  string
		p     Principal
		owner string
		want  error
	}{
		{"owner", alice, "alice", nil},
		{"other", alice, "bob", ErrForbidden},
		{"nobody's node", alice, "", ErrForbidden},
		{"admin", admin, "bob", nil},
		{"admin, nobody's node", admin, "", nil},
		{"authentication off", Everyone, "bob", nil},
		{"anonymous", Principal{}, "bob", ErrUnauthenticated},
		{"anonymous, nobody's node", Principal{}, "", ErrUnauthenticated},
	} {
		if err := MayWrite(tc.p, tc.owner); !errors.Is(err, tc.want) || (err == nil) != (tc.want == nil) {
			t.Errorf("%s: %v, want %v", tc.name, err, tc.want)
		}
	}
	if MayCreate(Principal{}) == nil || MayCreate(alice) != nil || MayCreate(Everyone) != nil {
		t.Error("MayCreate: only an anonymous caller is refused")
	}
	if MaySeeOwner(Principal{}, "") || MaySeeOwner(alice, "bob") || !MaySeeOwner(alice, "alice") || !MaySeeOwner(admin, "bob") {
		t.Error("MaySeeOwner: only the owner and admins")
	}
	if From(context.Background()).Authenticated() {
		t.Error("a context without a principal is not anonymous")
	}
}

// TestVerifierFiles: keys from a PEM file and an HS256 secret, scopes from
// scope or scp, and an HS256 token signed with the public key refused.
func TestVerifierFiles(t *testing.T) {
	dir := t.TempDir()
	priv, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	der, _ := x509.MarshalPKIXPublicKey(&priv.PublicKey)
	pemFile := filepath.Join(dir, "keys.pem")
	pemBytes := pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: der})
	os.WriteFile(pemFile, pemBytes, 0o600)
	secret := strings.Repeat("s", 40)
	secretFile := filepath.Join(dir, "secret")
	os.WriteFile(secretFile, []byte(secret+"\n"), 0o600)

	v, err := NewVerifier(t.Context(), Config{JWKSFile: pemFile, HS256SecretFile: secretFile, Leeway: time.Second}, zerolog.Nop())
	if err != nil {
		t.Fatal(err)
	}
	sign := func(alg jwa.SignatureAlgorithm, key any, claims map[string]any) string {
		b := jwt.NewBuilder().Subject("alice").Expiration(time.Now().Add(time.Hour))
		for k, c := range claims {
			b = b.Claim(k, c)
		}
		tok, err := b.Build()
		if err != nil {
			t.Fatal(err)
		}
		s, err := jwt.Sign(tok, jwt.WithKey(alg, key))
		if err != nil {
			t.Fatal(err)
		}
		return string(s)
	}
	for name, tc := range map[string]struct {
		token  string
		scopes []string
		admin  bool
	}{
		"RS256, scope":     {sign(jwa.RS256(), priv, map[string]any{"scope": "a hbgraph:admin"}), []string{"a", "hbgraph:admin"}, true},
		"PS256, scp list":  {sign(jwa.PS256(), priv, map[string]any{"scp": []string{"x", "y"}}), []string{"x", "y"}, false},
		"HS256 secret":     {sign(jwa.HS256(), []byte(secret), map[string]any{"scp": "z"}), []string{"z"}, false},
		"RS256, no scopes": {sign(jwa.RS256(), priv, nil), nil, false},
	} {
		p, err := v.Verify(t.Context(), tc.token)
		if err != nil {
			t.Errorf("%s: %v", name, err)
			continue
		}
		if p.Subject != "alice" || p.Admin != tc.admin || strings.Join(p.Scopes, " ") != strings.Join(tc.scopes, " ") {
			t.Errorf("%s: %+v", name, p)
		}
	}
	for name, token := range map[string]string{
		"HS256 signed with the PEM": sign(jwa.HS256(), pemBytes, nil),
		"HS256 with another secret": sign(jwa.HS256(), []byte(strings.Repeat("t", 40)), nil),
	} {
		if _, err := v.Verify(t.Context(), token); !errors.Is(err, ErrInvalidToken) {
			t.Errorf("%s: %v", name, err)
		}
	}
	os.WriteFile(secretFile, []byte("short"), 0o600)
	if _, err := NewVerifier(t.Context(), Config{HS256SecretFile: secretFile}, zerolog.Nop()); err == nil {
		t.Error("a 5-byte HS256 secret was accepted")
	}
}
