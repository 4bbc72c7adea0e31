package auth

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/lestrrat-go/httprc/v3"
	"github.com/lestrrat-go/httprc/v3/errsink"
	"github.com/lestrrat-go/jwx/v3/jwa"
	"github.com/lestrrat-go/jwx/v3/jwk"
	"github.com/lestrrat-go/jwx/v3/jws"
	"github.com/lestrrat-go/jwx/v3/jwt"
	"github.com/rs/zerolog"
)

// Config says where the keys that sign tokens come from and what a token
// must claim. With none of JWKSURL, JWKSFile and HS256SecretFile set,
// authentication is off.
type Config struct {
	// JWKSURL is an identity provider's JSON Web Key Set: fetched at start
	// (a failure stops the start), refreshed every RefreshInterval and
	// when a token names a key id it does not hold (at most once per
	// MinRefreshGap); a failed refresh keeps the last good set.
	JWKSURL string
	// JWKSFile is a JSON Web Key Set, or PEM public keys, on disk.
	JWKSFile string
	// HS256SecretFile holds a shared secret for HS256 tokens; only tokens
	// whose header says HS256 are checked against it.
	HS256SecretFile string
	// Issuer and Audience, when set, must match the iss and aud claims.
	Issuer, Audience string
	// Leeway is the clock skew allowed on exp, nbf and iat.
	Leeway time.Duration
	// AdminScope is the scope that makes a caller an admin.
	AdminScope string
	// RefreshInterval is how often JWKSURL is fetched again.
	RefreshInterval time.Duration
	// MinRefreshGap bounds the refreshes an unknown key id causes: tokens
	// with made-up key ids cannot make hbgraph hammer the provider.
	MinRefreshGap time.Duration
}

// Enabled reports whether any key source is configured.
func (c Config) Enabled() bool {
	return c.JWKSURL != "" || c.JWKSFile != "" || c.HS256SecretFile != ""
}

// Defaults for Config's durations and admin scope.
const (
	DefaultAdminScope      = "hbgraph:admin"
	DefaultLeeway          = 30 * time.Second
	DefaultRefreshInterval = 15 * time.Minute
	DefaultMinRefreshGap   = time.Second
)

// Verifier turns a bearer token into a Principal. Safe for concurrent use.
type Verifier struct {
	cfg    Config
	log    zerolog.Logger
	static jwk.Set // JWKSFile's keys
	secret []byte  // HS256SecretFile's secret
	cache  *jwk.Cache

	mu          sync.Mutex
	lastRefresh time.Time
}

// fetchTimeout bounds one fetch of the key set.
const fetchTimeout = 10 * time.Second

// NewVerifier loads the configured keys; the JWKS URL's are fetched once
// before it returns. The background refresh stops with ctx.
func NewVerifier(ctx context.Context, cfg Config, log zerolog.Logger) (*Verifier, error) {
	if !cfg.Enabled() {
		return nil, errors.New("auth: no key source configured")
	}
	if cfg.AdminScope == "" {
		cfg.AdminScope = DefaultAdminScope
	}
	if cfg.RefreshInterval <= 0 {
		cfg.RefreshInterval = DefaultRefreshInterval
	}
	if cfg.MinRefreshGap <= 0 {
		cfg.MinRefreshGap = DefaultMinRefreshGap
	}
	if cfg.Leeway < 0 {
		return nil, errors.New("auth: leeway must not be negative")
	}
	v := &Verifier{cfg: cfg, log: log}
	if cfg.JWKSFile != "" {
		b, err := os.ReadFile(cfg.JWKSFile)
		if err != nil {
			return nil, fmt.Errorf("auth: JWKS file: %w", err)
		}
		pem := strings.Contains(string(b), "-----BEGIN")
		if v.static, err = jwk.Parse(b, jwk.WithPEM(pem)); err != nil {
			return nil, fmt.Errorf("auth: JWKS file %s: %w", cfg.JWKSFile, err)
		}
		if err := refuseSymmetric(v.static); err != nil {
			return nil, fmt.Errorf("auth: JWKS file %s: %w", cfg.JWKSFile, err)
		}
	}
	if cfg.HS256SecretFile != "" {
		b, err := os.ReadFile(cfg.HS256SecretFile)
		if err != nil {
			return nil, fmt.Errorf("auth: HS256 secret file: %w", err)
		}
		// A trailing newline from `echo` or an editor is not part of it.
		if v.secret = []byte(strings.TrimRight(string(b), "\r\n")); len(v.secret) < 32 {
			return nil, fmt.Errorf("auth: HS256 secret in %s is %d bytes; at least 32 are needed", cfg.HS256SecretFile, len(v.secret))
		}
	}
	if cfg.JWKSURL != "" {
		client := httprc.NewClient(httprc.WithErrorSink(errsink.NewFunc(func(_ context.Context, err error) {
			log.Warn().Err(err).Str("jwks_url", cfg.JWKSURL).Msg("JWKS refresh failed: keeping the last good key set")
		})))
		cache, err := jwk.NewCache(ctx, client)
		if err != nil {
			return nil, fmt.Errorf("auth: JWKS cache: %w", err)
		}
		fetchCtx, cancel := context.WithTimeout(ctx, fetchTimeout)
		defer cancel()
		err = cache.Register(fetchCtx, cfg.JWKSURL,
			jwk.WithHTTPClient(&http.Client{Timeout: fetchTimeout}),
			jwk.WithHttprcResourceOption(httprc.WithConstantInterval(cfg.RefreshInterval)))
		var set jwk.Set
		if err == nil {
			set, err = cache.Lookup(fetchCtx, cfg.JWKSURL)
		}
		if err != nil {
			return nil, fmt.Errorf("auth: fetching the JWKS at %s: %w", cfg.JWKSURL, err)
		}
		if err := refuseSymmetric(set); err != nil {
			return nil, fmt.Errorf("auth: JWKS at %s: %w", cfg.JWKSURL, err)
		}
		v.cache = cache
	}
	return v, nil
}

// refuseSymmetric refuses a key set with a shared-secret key: a key set
// holds public keys, and an HS256 secret is configured on its own.
func refuseSymmetric(set jwk.Set) error {
	for i := range set.Len() {
		k, _ := set.Key(i)
		if k.KeyType() == jwa.OctetSeq() {
			return errors.New("holds a symmetric (oct) key; configure an HS256 secret with its own flag")
		}
	}
	return nil
}

// ErrInvalidToken wraps every reason a presented token is refused.
var ErrInvalidToken = errors.New("invalid token")

// Verify checks token's signature (the algorithm comes from the key, so
// "none" and an HS256 token signed with a public key are refused), exp,
// nbf and iat with the leeway, iss and aud when configured, and that it
// names a subject; it returns the caller.
func (v *Verifier) Verify(ctx context.Context, token string) (Principal, error) {
	alg, kid := header(token)
	tok, err := v.parse(ctx, token, alg)
	if err != nil && v.cache != nil && v.unknownKeyID(ctx, kid) && v.refresh(ctx) {
		tok, err = v.parse(ctx, token, alg) // the provider may have rotated its keys
	}
	if err != nil {
		return Principal{}, fmt.Errorf("%w: %v", ErrInvalidToken, err)
	}
	sub, ok := tok.Subject()
	if !ok || sub == "" {
		return Principal{}, fmt.Errorf("%w: no sub claim", ErrInvalidToken)
	}
	p := Principal{Subject: sub, Scopes: scopes(tok)}
	p.Admin = p.HasScope(v.cfg.AdminScope)
	return p, nil
}

// parse verifies and validates token, whose header names alg.
func (v *Verifier) parse(ctx context.Context, token, alg string) (jwt.Token, error) {
	opts := []jwt.ParseOption{
		jwt.WithValidate(true),
		jwt.WithAcceptableSkew(v.cfg.Leeway),
	}
	if v.cfg.Issuer != "" {
		opts = append(opts, jwt.WithIssuer(v.cfg.Issuer))
	}
	if v.cfg.Audience != "" {
		opts = append(opts, jwt.WithAudience(v.cfg.Audience))
	}
	if alg == jwa.HS256().String() && v.secret != nil {
		opts = append(opts, jwt.WithKey(jwa.HS256(), v.secret))
		return jwt.ParseString(token, opts...)
	}
	sets, err := v.keySets(ctx)
	if err != nil {
		return nil, err
	}
	// Each set is tried in turn. A key without an alg of its own allows
	// only the algorithms of its type (RS*/PS* for RSA, ES* for EC, EdDSA
	// for OKP).
	for _, set := range sets {
		opts = append(opts, jwt.WithKeySet(set, jws.WithInferAlgorithmFromKey(true), jws.WithRequireKid(false)))
	}
	return jwt.ParseString(token, opts...)
}

// keySets are the file's keys and the URL's current ones.
func (v *Verifier) keySets(ctx context.Context) ([]jwk.Set, error) {
	var sets []jwk.Set
	if v.static != nil {
		sets = append(sets, v.static)
	}
	if v.cache != nil {
		fetched, err := v.cache.Lookup(ctx, v.cfg.JWKSURL)
		if err != nil {
			return nil, err
		}
		sets = append(sets, fetched)
	}
	if len(sets) == 0 {
		return nil, errors.New("no public keys configured")
	}
	return sets, nil
}

// header is the alg and kid of token's protected header, "" where absent
// or when the token is no compact JWS.
func header(token string) (alg, kid string) {
	msg, err := jws.ParseString(token)
	if err != nil || len(msg.Signatures()) != 1 {
		return "", ""
	}
	h := msg.Signatures()[0].ProtectedHeaders()
	if a, ok := h.Algorithm(); ok {
		alg = a.String()
	}
	kid, _ = h.KeyID()
	return alg, kid
}

// unknownKeyID reports whether kid is a key id none of the current sets
// holds.
func (v *Verifier) unknownKeyID(ctx context.Context, kid string) bool {
	if kid == "" {
		return false
	}
	sets, err := v.keySets(ctx)
	if err != nil {
		return true
	}
	for _, set := range sets {
		if _, found := set.LookupKeyID(kid); found {
			return false
		}
	}
	return true
}

// refresh fetches the JWKS again unless it did less than MinRefreshGap
// ago; it reports whether it fetched a set.
func (v *Verifier) refresh(ctx context.Context) bool {
	v.mu.Lock()
	if time.Since(v.lastRefresh) < v.cfg.MinRefreshGap {
		v.mu.Unlock()
		return false
	}
	v.lastRefresh = time.Now()
	v.mu.Unlock()
	fetchCtx, cancel := context.WithTimeout(ctx, fetchTimeout)
	defer cancel()
	if _, err := v.cache.Refresh(fetchCtx, v.cfg.JWKSURL); err != nil {
		v.log.Warn().Err(err).Str("jwks_url", v.cfg.JWKSURL).Msg("JWKS refresh for an unknown key id failed: keeping the last good key set")
		return false
	}
	return true
}

// scopes reads the scope claim (space-separated, OAuth 2.0) or scp (a
// string or a list, as some providers send).
func scopes(tok jwt.Token) []string {
	var s string
	if tok.Get("scope", &s) == nil {
		return strings.Fields(s)
	}
	var v any
	if tok.Get("scp", &v) != nil {
		return nil
	}
	switch v := v.(type) {
	case string:
		return strings.Fields(v)
	case []any:
		out := make([]string, 0, len(v))
		for _, e := range v {
			if s, ok := e.(string); ok {
				out = append(out, s)
			}
		}
		return out
	}
	return nil
}
