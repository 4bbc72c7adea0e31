package tests

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/hmac"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"crypto/x509"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"encoding/pem"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/lestrrat-go/jwx/v3/jwa"
	"github.com/lestrrat-go/jwx/v3/jwk"
	"github.com/lestrrat-go/jwx/v3/jwt"
)

const (
	testIssuer   = "https://idp.test/"
	testAudience = "hbgraph"
)

// idp is an identity provider for the tests: it signs tokens and serves
// its public keys as a JWKS on 127.0.0.1. Its set can be rotated or made
// to fail.
type idp struct {
	t       testing.TB
	srv     *httptest.Server
	rsaKey  jwk.Key // kid "rsa-1", served from the start
	ecKey   jwk.Key // kid "ec-2", served once rotated in
	rsaPEM  []byte  // rsaKey's public key, PEM
	mu      sync.Mutex
	served  []jwk.Key
	failing bool
	fetches int
}

func newIDP(t testing.TB) *idp {
	t.Helper()
	p := &idp{t: t}
	rsaPriv, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	ecPriv, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	p.rsaKey = privateJWK(t, rsaPriv, "rsa-1")
	p.ecKey = privateJWK(t, ecPriv, "ec-2")
	der, err := x509.MarshalPKIXPublicKey(&rsaPriv.PublicKey)
	if err != nil {
		t.Fatal(err)
	}
	p.rsaPEM = pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: der})
	p.served = []jwk.Key{p.rsaKey}
	p.srv = httptest.NewServer(http.HandlerFunc(p.serveJWKS))
	t.Cleanup(p.srv.Close)
	return p
}

func privateJWK(t testing.TB, raw any, kid string) jwk.Key {
	t.Helper()
	k, err := jwk.Import(raw)
	if err != nil {
		t.Fatal(err)
	}
	if err := k.Set(jwk.KeyIDKey, kid); err != nil {
		t.Fatal(err)
	}
	return k
}

func (p *idp) serveJWKS(w http.ResponseWriter, _ *http.Request) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.fetches++
	if p.failing {
		http.Error(w, "down", http.StatusInternalServerError)
		return
	}
	set := jwk.NewSet()
	for _, k := range p.served {
		pub, err := k.PublicKey()
		if err != nil {
			p.t.Error(err)
			return
		}
		_ = set.AddKey(pub)
	}
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(set)
}

// rotate adds the EC key to the set served.
func (p *idp) rotate() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.served = append(p.served, p.ecKey)
}

func (p *idp) setFailing(failing bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.failing = failing
}

// args are hbgraph's flags for this provider.
func (p *idp) args() []string {
	return []string{"--auth-jwks-url", p.srv.URL, "--auth-issuer", testIssuer, "--auth-audience", testAudience}
}

// claims are a token's; zero fields get valid defaults.
type claims struct {
	sub, iss, aud, scope string
	exp, nbf             time.Time
}

// token signs c with key (RS256 for RSA, ES256 for EC).
func (p *idp) token(key jwk.Key, c claims) string {
	p.t.Helper()
	if c.iss == "" {
		c.iss = testIssuer
	}
	if c.aud == "" {
		c.aud = testAudience
	}
	if c.exp.IsZero() {
		c.exp = time.Now().Add(time.Hour)
	}
	b := jwt.NewBuilder().Subject(c.sub).Issuer(c.iss).Audience([]string{c.aud}).
		IssuedAt(time.Now().Add(-time.Minute)).Expiration(c.exp)
	if !c.nbf.IsZero() {
		b = b.NotBefore(c.nbf)
	}
	if c.scope != "" {
		b = b.Claim("scope", c.scope)
	}
	tok, err := b.Build()
	if err != nil {
		p.t.Fatal(err)
	}
	alg := jwa.RS256()
	if key.KeyType() == jwa.EC() {
		alg = jwa.ES256()
	}
	signed, err := jwt.Sign(tok, jwt.WithKey(alg, key))
	if err != nil {
		p.t.Fatal(err)
	}
	return string(signed)
}

// user is a token for sub with no scope; admin one with the admin scope.
func (p *idp) user(sub string) string { return p.token(p.rsaKey, claims{sub: sub, scope: "profile"}) }
func (p *idp) admin() string {
	return p.token(p.rsaKey, claims{sub: "root", scope: "profile hbgraph:admin"})
}

// forged builds a token from a raw header and payload, signed with sign
// (nil: no signature).
func forged(header, payload map[string]any, sign func(input []byte) []byte) string {
	enc := base64.RawURLEncoding
	h, _ := json.Marshal(header)
	pl, _ := json.Marshal(payload)
	input := enc.EncodeToString(h) + "." + enc.EncodeToString(pl)
	sig := ""
	if sign != nil {
		sig = enc.EncodeToString(sign([]byte(input)))
	}
	return input + "." + sig
}

func validPayload(sub string) map[string]any {
	now := time.Now().Unix()
	return map[string]any{"sub": sub, "iss": testIssuer, "aud": testAudience, "iat": now - 60, "exp": now + 3600, "scope": "hbgraph:admin"}
}

// as posts query with token as its bearer ("" for none).
func (s *server) as(t testing.TB, token, query string, vars map[string]any) *gqlResponse {
	t.Helper()
	body, err := json.Marshal(gqlRequest{Query: query, Variables: vars})
	if err != nil {
		t.Fatal(err)
	}
	h := http.Header{}
	if token != "" {
		h.Set("Authorization", "Bearer "+token)
	}
	return s.postRaw(t, body, h)
}

// snapshot is everything stored about the test's nodes, as hbgraph answers
// it: compared byte for byte before and after refused requests.
func (s *server) snapshot(t testing.TB, token string, ids ...string) string {
	t.Helper()
	r := s.as(t, token, `query($ids: [ID!]!) { nodes(ids: $ids) { id owner properties createdAt updatedAt
		relationships(type: "follows", direction: OUTGOING) { totalCount edges { node { id properties updatedAt } } }
		articles { totalCount edges { node { id title body category updatedAt } } } } }`, map[string]any{"ids": ids})
	r.ok(t, nil)
	return string(r.Data)
}

// TestTokensRefused: every kind of bad token is refused with 401,
// WWW-Authenticate and UNAUTHENTICATED, never treated as anonymous, and
// the mutation it carried wrote nothing.
func TestTokensRefused(t *testing.T) {
	parallelTest(t)
	p := newIDP(t)
	s := startServer(t, p.args()...)
	s.as(t, p.user("alice"), `mutation { createNode(id: "a1", properties: {n: 1}) { id } }`, nil).ok(t, nil)
	before := s.snapshot(t, p.admin(), "a1")

	valid := p.user("alice")
	parts := strings.Split(valid, ".")
	tamperedPayload, _ := json.Marshal(map[string]any{"sub": "root", "iss": testIssuer, "aud": testAudience, "exp": time.Now().Add(time.Hour).Unix(), "scope": "hbgraph:admin"})
	rsaPub, _ := p.rsaKey.PublicKey()
	var rsaPubJSON []byte
	rsaPubJSON, _ = json.Marshal(rsaPub)
	hmacWith := func(secret []byte) func([]byte) []byte {
		return func(input []byte) []byte {
			m := hmac.New(sha256.New, secret)
			m.Write(input)
			return m.Sum(nil)
		}
	}
	for name, token := range map[string]string{
		"expired":         p.token(p.rsaKey, claims{sub: "alice", exp: time.Now().Add(-5 * time.Minute)}),
		"not yet valid":   p.token(p.rsaKey, claims{sub: "alice", nbf: time.Now().Add(5 * time.Minute)}),
		"wrong issuer":    p.token(p.rsaKey, claims{sub: "alice", iss: "https://evil.test/"}),
		"wrong audience":  p.token(p.rsaKey, claims{sub: "alice", aud: "someone-else"}),
		"no subject":      p.token(p.rsaKey, claims{}),
		"alg none":        forged(map[string]any{"alg": "none", "typ": "JWT"}, validPayload("root"), nil),
		"alg none kid":    forged(map[string]any{"alg": "none", "typ": "JWT", "kid": "rsa-1"}, validPayload("root"), nil),
		"HS256 with PEM":  forged(map[string]any{"alg": "HS256", "typ": "JWT", "kid": "rsa-1"}, validPayload("root"), hmacWith(p.rsaPEM)),
		"HS256 with JWK":  forged(map[string]any{"alg": "HS256", "typ": "JWT", "kid": "rsa-1"}, validPayload("root"), hmacWith(rsaPubJSON)),
		"tampered":        parts[0] + "." + base64.RawURLEncoding.EncodeToString(tamperedPayload) + "." + parts[2],
		"bad signature":   parts[0] + "." + parts[1] + "." + strings.Repeat("A", len(parts[2])),
		"not a JWT":       "hello",
		"unknown kid now": p.token(p.ecKey, claims{sub: "alice"}),
	} {
		r := s.as(t, token, `mutation { updateNodeProperties(id: "a1", set: {n: 2}) { id } }`, nil)
		if r.Status != http.StatusUnauthorized || len(r.Errors) != 1 || r.Errors[0].Code() != "UNAUTHENTICATED" ||
			!strings.Contains(r.Header.Get("WWW-Authenticate"), `error="invalid_token"`) {
			t.Errorf("%s: %d, WWW-Authenticate %q: %s", name, r.Status, r.Header.Get("WWW-Authenticate"), r.Body)
		}
	}
	// Not a bearer token at all.
	h := http.Header{"Authorization": {"Basic YWxpY2U6c2VjcmV0"}}
	if r := s.postRaw(t, []byte(`{"query":"{ __typename }"}`), h); r.Status != http.StatusUnauthorized || r.Errors[0].Code() != "UNAUTHENTICATED" {
		t.Errorf("Basic: %d %s", r.Status, r.Body)
	}
	if after := s.snapshot(t, p.admin(), "a1"); after != before {
		t.Errorf("refused requests changed the data:\nbefore %s\nafter  %s", before, after)
	}
	if n := s.metrics(t)[`hbgraph_unauthenticated_total{reason="invalid"}`]; n < 13 {
		t.Errorf("hbgraph_unauthenticated_total{reason=\"invalid\"} = %v", n)
	}

	// The provider rotates its keys: a token signed with the new key is
	// accepted once hbgraph has fetched the set again (on the unknown kid,
	// at most once a second). While the provider is down the last good set
	// still verifies.
	p.rotate()
	ecToken := p.token(p.ecKey, claims{sub: "alice"})
	deadline := time.Now().Add(10 * time.Second)
	for {
		r := s.as(t, ecToken, `{ node(id: "a1") { owner } }`, nil)
		if r.Status == http.StatusOK {
			if !strings.Contains(string(r.Data), `"owner":"alice"`) {
				t.Errorf("rotated key: %s", r.Body)
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("a token signed with the rotated-in key is still refused: %d %s", r.Status, r.Body)
		}
		time.Sleep(200 * time.Millisecond)
	}
	p.setFailing(true)
	time.Sleep(1100 * time.Millisecond)
	// An unknown kid makes hbgraph refetch, which fails: still refused,
	// and the keys it had keep working.
	stranger := privateJWK(t, mustRSA(t), "stranger")
	if r := s.as(t, p.token(stranger, claims{sub: "alice"}), `{ __typename }`, nil); r.Status != http.StatusUnauthorized {
		t.Errorf("unknown kid while the provider is down: %d %s", r.Status, r.Body)
	}
	if r := s.as(t, p.user("alice"), `{ node(id: "a1") { id } }`, nil); r.Status != http.StatusOK {
		t.Errorf("a valid token while the provider is down: %d %s", r.Status, r.Body)
	}
}

func mustRSA(t testing.TB) *rsa.PrivateKey {
	k, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	return k
}

// TestOwnership runs every mutation as its node's owner, another subject,
// an admin and anonymously: only the owner and the admin may; the others
// get FORBIDDEN or UNAUTHENTICATED at the mutation's path and write
// nothing. Node.owner shows only to the owner and admins.
func TestOwnership(t *testing.T) {
	parallelTest(t)
	p := newIDP(t)
	s := startServer(t, p.args()...)
	alice, bob, admin := p.user("alice"), p.user("bob"), p.admin()

	s.as(t, "", `mutation { createNode(id: "x") { id } }`, nil).wantError(t, "UNAUTHENTICATED", "createNode")
	for _, id := range []string{"a1", "a2"} {
		var created struct{ CreateNode struct{ Owner string } }
		s.as(t, alice, `mutation($id: ID!) { createNode(id: $id, properties: {v: 0}) { id owner } }`, map[string]any{"id": id}).ok(t, &created)
		if created.CreateNode.Owner != "alice" {
			t.Errorf("createNode's owner: %q", created.CreateNode.Owner)
		}
	}
	s.as(t, bob, `mutation { createNode(id: "b1") { id } }`, nil).ok(t, nil)
	var post struct{ PostArticle struct{ ID string } }
	s.as(t, alice, `mutation { postArticle(authorId: "a1", title: "t", body: "b", category: "c") { id } }`, nil).ok(t, &post)
	s.as(t, alice, `mutation { createRelationship(startNodeId: "a1", type: "follows", endNodeId: "b1") { id } }`, nil).ok(t, nil)

	// Who sees the owner.
	for name, tc := range map[string]struct{ token, want string }{
		"owner": {alice, `"alice"`}, "admin": {admin, `"alice"`}, "other": {bob, "null"}, "anonymous": {"", "null"},
	} {
		var got struct {
			Node struct{ Owner json.RawMessage }
		}
		s.as(t, tc.token, `{ node(id: "a1") { owner } }`, nil).ok(t, &got)
		if string(got.Node.Owner) != tc.want {
			t.Errorf("owner as %s: %s, want %s", name, got.Node.Owner, tc.want)
		}
	}

	// Every mutation on what a node owns: refused to another subject and
	// to an anonymous caller with nothing written, then done by the owner
	// (on a1) and by an admin (on a2, also alice's).
	s.as(t, alice, `mutation { createRelationship(startNodeId: "a2", type: "follows", endNodeId: "b1") { id } }`, nil).ok(t, nil)
	articles := map[string]string{"a1": post.PostArticle.ID}
	s.as(t, alice, `mutation { postArticle(authorId: "a2", title: "t", body: "b", category: "c") { id } }`, nil).ok(t, &post)
	articles["a2"] = post.PostArticle.ID
	mutations := []struct {
		field, query string
	}{
		{"updateNodeProperties", `mutation { updateNodeProperties(id: "NODE", set: {v: 1}) { id owner } }`},
		{"createRelationship", `mutation { createRelationship(startNodeId: "NODE", type: "likes", endNodeId: "b1") { id } }`},
		{"updateRelationshipProperties", `mutation { updateRelationshipProperties(startNodeId: "NODE", type: "follows", endNodeId: "b1", set: {w: 1}) { id } }`},
		{"postArticle", `mutation { postArticle(authorId: "NODE", title: "t2", body: "b2", category: "c") { id } }`},
		{"updateArticle", `mutation { updateArticle(id: "ARTICLE", title: "t3") { id } }`},
		{"deleteArticle", `mutation { deleteArticle(id: "ARTICLE") }`},
		{"deleteRelationship", `mutation { deleteRelationship(startNodeId: "NODE", type: "follows", endNodeId: "b1") }`},
		{"deleteNode", `mutation { deleteNode(id: "NODE", detach: true) }`},
	}
	for _, by := range []struct{ node, token string }{{"a1", alice}, {"a2", admin}} {
		for _, m := range mutations {
			query := strings.NewReplacer("NODE", by.node, "ARTICLE", articles[by.node]).Replace(m.query)
			before := s.snapshot(t, admin, "a1", "a2", "b1")
			s.as(t, bob, query, nil).wantError(t, "FORBIDDEN", m.field)
			s.as(t, "", query, nil).wantError(t, "UNAUTHENTICATED", m.field)
			if after := s.snapshot(t, admin, "a1", "a2", "b1"); after != before {
				t.Fatalf("%s refused but the data changed:\nbefore %s\nafter  %s", m.field, before, after)
			}
			s.as(t, by.token, query, nil).ok(t, nil)
		}
	}
	// bob may change his own node.
	s.as(t, bob, `mutation { updateNodeProperties(id: "b1", set: {v: 1}) { id } }`, nil).ok(t, nil)
	s.as(t, bob, `mutation { deleteNode(id: "b1", detach: true) }`, nil).ok(t, nil)
	// A node nobody owns is NOT_FOUND to a subject before it exists.
	s.as(t, bob, `mutation { updateNodeProperties(id: "nope", set: {v: 1}) { id } }`, nil).wantError(t, "NOT_FOUND", "updateNodeProperties")
}

// TestLogNamesTheSubject: the request's log line names the token's subject
// and never carries the token.
func TestLogNamesTheSubject(t *testing.T) {
	parallelTest(t)
	p := newIDP(t)
	s := startServer(t, append(p.args(), "--log-level", "info")...)
	token := p.user("auth0|alice")
	h := http.Header{"Authorization": {"Bearer " + token}, "X-Request-Id": {"subject-log-check"}}
	s.postRaw(t, []byte(`{"query":"{ __typename }"}`), h).ok(t, nil)
	var line map[string]any
	for deadline := time.Now().Add(5 * time.Second); line == nil && time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		for _, l := range strings.Split(s.out.String(), "\n") {
			var m map[string]any
			if json.Unmarshal([]byte(l), &m) == nil && m["request_id"] == "subject-log-check" && m["message"] == "graphql" {
				line = m
			}
		}
	}
	if line == nil || line["subject"] != "auth0|alice" {
		t.Errorf("log line %v, want subject auth0|alice", line)
	}
	if strings.Contains(s.out.String(), strings.Split(token, ".")[2]) {
		t.Error("the log carries the token")
	}
}

// TestReadsNeedToken: with --auth-read=required a query without a token
// is refused with 401; with one it is answered.
func TestReadsNeedToken(t *testing.T) {
	parallelTest(t)
	p := newIDP(t)
	s := startServer(t, append(p.args(), "--auth-read", "required")...)
	r := s.as(t, "", `{ node(id: "x") { id } }`, nil)
	if r.Status != http.StatusUnauthorized || r.Errors[0].Code() != "UNAUTHENTICATED" || r.Header.Get("WWW-Authenticate") == "" {
		t.Errorf("anonymous read: %d %q %s", r.Status, r.Header.Get("WWW-Authenticate"), r.Body)
	}
	s.as(t, p.user("alice"), `{ node(id: "x") { id } }`, nil).ok(t, nil)
}

// TestRateLimitPerSubject: each subject has its own bucket, whatever
// address it calls from.
func TestRateLimitPerSubject(t *testing.T) {
	parallelTest(t)
	p := newIDP(t)
	s := startServer(t, append(p.args(), "--rate-limit", "0.5", "--rate-burst", "1")...)
	alice, bob := p.user("alice"), p.user("bob")
	s.as(t, alice, `{ __typename }`, nil).ok(t, nil)
	if r := s.as(t, alice, `{ __typename }`, nil); r.Status != http.StatusTooManyRequests || r.Header.Get("Retry-After") == "" {
		t.Errorf("alice's second request: %d %s", r.Status, r.Body)
	}
	s.as(t, bob, `{ __typename }`, nil).ok(t, nil) // same address, another subject
	s.as(t, "", `{ __typename }`, nil).ok(t, nil)  // anonymous: the address's bucket
	if r := s.as(t, "", `{ __typename }`, nil); r.Status != http.StatusTooManyRequests {
		t.Errorf("the address's second anonymous request: %d %s", r.Status, r.Body)
	}
}

// TestTrustedDocuments: with --trusted-documents-only a listed operation
// runs by id or by body, anything else is refused with
// PERSISTED_QUERY_NOT_IN_LIST, and an admin's token may still send any.
func TestTrustedDocuments(t *testing.T) {
	parallelTest(t)
	p := newIDP(t)
	listed := `query Hello { __typename }`
	sum := sha256.Sum256([]byte(listed))
	id := hex.EncodeToString(sum[:])
	manifest := filepath.Join(t.TempDir(), "manifest.json")
	b, _ := json.Marshal(map[string]any{"format": "apollo-persisted-query-manifest", "version": 1,
		"operations": []map[string]any{{"id": id, "name": "Hello", "type": "query", "body": listed}}})
	if err := os.WriteFile(manifest, b, 0o600); err != nil {
		t.Fatal(err)
	}
	// Without --trusted-documents-only a listed id runs and so does any
	// other document.
	open := startServer(t, "--trusted-documents", manifest)
	byID := gqlRequest{Extensions: map[string]any{"persistedQuery": map[string]any{"version": 1, "sha256Hash": id}}}
	open.post(t, byID).ok(t, nil)
	open.post(t, gqlRequest{Query: `{ node(id: "x") { id } }`}).ok(t, nil)

	s := startServer(t, append(p.args(), "--trusted-documents", manifest, "--trusted-documents-only")...)
	s.post(t, byID).ok(t, nil)
	s.get(t, byID).ok(t, nil)
	s.post(t, gqlRequest{Query: listed}).ok(t, nil)
	s.post(t, gqlRequest{Query: `{ node(id: "x") { id } }`}).wantError(t, "PERSISTED_QUERY_NOT_IN_LIST", "")
	unknown := gqlRequest{Extensions: map[string]any{"persistedQuery": map[string]any{"version": 1, "sha256Hash": strings.Repeat("ab", 32)}}}
	s.post(t, unknown).wantError(t, "PERSISTED_QUERY_NOT_IN_LIST", "")
	s.as(t, p.admin(), `{ node(id: "x") { id } }`, nil).ok(t, nil)
	s.as(t, p.user("alice"), `{ node(id: "x") { id } }`, nil).wantError(t, "PERSISTED_QUERY_NOT_IN_LIST", "")
}

// TestUnsafeStartsRefused: without authentication hbgraph refuses to
// listen beyond loopback unless --insecure-no-auth says to; and a JWKS it
// cannot fetch stops the start.
func TestUnsafeStartsRefused(t *testing.T) {
	parallelTest(t)
	for name, args := range map[string][]string{
		"beyond loopback":    {"--listen", "0.0.0.0:0"},
		"JWKS unreachable":   {"--listen", "127.0.0.1:0", "--auth-jwks-url", "http://127.0.0.1:1/jwks.json"},
		"reads without keys": {"--listen", "127.0.0.1:0", "--auth-read", "required"},
	} {
		ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
		defer cancel()
		cmd := exec.CommandContext(ctx, serverBin, append([]string{"--data-dir", t.TempDir(), "--admin-listen", "127.0.0.1:0"}, args...)...)
		out, err := cmd.CombinedOutput()
		if err == nil {
			t.Errorf("%s: hbgraph started (and exited 0):\n%s", name, out)
		}
	}
}
