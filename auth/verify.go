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
	// MaxTokenLifetime, when positive, refuses tokens that live longer:
	// exp - iat, or exp - now without an iat. 0: no bound.
	MaxTokenLifetime time.Duration
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
	if cfg.MaxTokenLifetime < 0 {
		return nil, errors.New("auth: maximum token lifetime must not be negative")
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
		if err := checkKeySet(v.static); err != nil {
			return nil, fmt.Errorf("auth: JWKS file %s: %w", cfg.JWKSFile, err)
		}
		logKeys(log, v.static).Str("jwks_file", cfg.JWKSFile).Msg("token keys loaded")
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
		if err := checkKeySet(set); err != nil {
			return nil, fmt.Errorf("auth: JWKS at %s: %w", cfg.JWKSURL, err)
		}
		logKeys(log, set).Str("jwks_url", cfg.JWKSURL).Msg("token keys loaded")
		v.cache = cache
	}
	return v, nil
}

// checkKeySet refuses a key set that could not verify a token as it
// should: one with no keys (every token would be refused, and nothing
// would say why until the first one), one with a shared-secret key (a key
// set holds public keys; an HS256 secret is configured on its own) and one
// with a private key (whoever can read this file or URL could sign tokens:
// the signer's private half belongs with the signer alone).
func checkKeySet(set jwk.Set) error {
	if set.Len() == 0 {
		return errors.New("holds no keys; give it the public keys that sign your tokens")
	}
	for i := range set.Len() {
		k, _ := set.Key(i)
		if k.KeyType() == jwa.OctetSeq() {
			return errors.New("holds a symmetric (oct) key; configure an HS256 secret with its own flag")
		}
		if private, err := jwk.IsPrivateKey(k); err == nil && private {
			kid, _ := k.KeyID()
			return fmt.Errorf("holds a private %s key%s; give only the public keys (the private half stays with whoever signs the tokens)", k.KeyType(), kidSuffix(kid))
		}
	}
	return nil
}

func kidSuffix(kid string) string {
	if kid == "" {
		return ""
	}
	return fmt.Sprintf(" (kid %q)", kid)
}

// logKeys starts the log line that says how many keys of each kind a key
// set holds, so that a set other than the one meant is seen at start.
func logKeys(log zerolog.Logger, set jwk.Set) *zerolog.Event {
	var rsa, ec, okp int
	for i := range set.Len() {
		k, _ := set.Key(i)
		switch k.KeyType() {
		case jwa.RSA():
			rsa++
		case jwa.EC():
			ec++
		case jwa.OKP():
			okp++
		}
	}
	return log.Info().Int("keys", set.Len()).Int("rsa", rsa).Int("ec", ec).Int("okp", okp)
}

// ErrInvalidToken wraps every reason a presented token is refused; each is
// a *TokenError.
var ErrInvalidToken = errors.New("invalid token")

// Verify checks token's header (a compact JWS, an alg other than none, no
// crit), its signature with the key its kid names or, without a kid, with
// each key (the algorithm comes from the key, so an HS256 token signed
// with a public key is refused), then its claims: exp present and not past,
// nbf and iat with the leeway, the lifetime under MaxTokenLifetime when
// set, iss and aud when configured, and a sub fit to name an owner. It
// returns the caller, or a *TokenError saying which check failed.
func (v *Verifier) Verify(ctx context.Context, token string) (Principal, error) {
	h, err := readHeader(token)
	if err != nil {
		return Principal{}, err
	}
	tok, err := v.verifySignature(ctx, token, h)
	if err != nil {
		return Principal{}, err
	}
	if err := v.validate(tok); err != nil {
		return Principal{}, err
	}
	sub, ok := tok.Subject()
	switch {
	case !ok || sub == "":
		return Principal{}, refused(ReasonNoSubject, "the token names no subject (sub)")
	case !validSubject(sub):
		return Principal{}, refused(ReasonSubject, "the token's subject (sub) must be valid UTF-8 of at most %d bytes without control, format (bidirectional, zero-width), line-separator or replacement (U+FFFD) characters", MaxSubjectBytes)
	}
	exp, _ := tok.Expiration() // present: validate checked it
	p := Principal{Subject: sub, Scopes: scopes(tok), Expires: exp}
	p.Admin = p.HasScope(v.cfg.AdminScope)
	return p, nil
}

// tokenHeader is what Verify reads of a token's protected header.
type tokenHeader struct{ alg, kid string }

// readHeader decodes token's protected header and refuses what no key
// check should see: another form than compact, alg none or absent, and any
// crit (RFC 7515 4.1.11: a recipient must refuse critical parameters it
// does not understand, and hbgraph understands none).
func readHeader(token string) (tokenHeader, error) {
	if strings.Count(token, ".") != 2 {
		return tokenHeader{}, refused(ReasonMalformed, "the token is not a signed JWT (three base64url parts separated by dots)")
	}
	msg, err := jws.ParseString(token)
	if err != nil || len(msg.Signatures()) != 1 {
		return tokenHeader{}, refused(ReasonMalformed, "the token's header or payload does not decode")
	}
	ph := msg.Signatures()[0].ProtectedHeaders()
	var h tokenHeader
	if a, ok := ph.Algorithm(); ok {
		h.alg = a.String()
	}
	if h.alg == "" || h.alg == jwa.NoSignature().String() {
		return tokenHeader{}, refused(ReasonAlgorithm, "the token is not signed with an algorithm hbgraph accepts (alg none or absent)")
	}
	if ph.Has(jws.CriticalKey) {
		return tokenHeader{}, refused(ReasonCrit, "the token's header lists critical parameters (crit), which hbgraph does not support")
	}
	h.kid, _ = ph.KeyID()
	return h, nil
}

// verifySignature checks token's signature and decodes its claims, not
// yet validated. An HS256 token goes to the shared secret when there is
// one; a token with a kid to that key alone, the key set fetched again
// when no key has that id; a token without a kid to each key in turn.
func (v *Verifier) verifySignature(ctx context.Context, token string, h tokenHeader) (jwt.Token, error) {
	opts := []jwt.ParseOption{jwt.WithValidate(false)}
	switch {
	case h.alg == jwa.HS256().String() && v.secret != nil:
		opts = append(opts, jwt.WithKey(jwa.HS256(), v.secret))
	case h.kid != "":
		keys, err := v.keysFor(ctx, h.kid)
		if err != nil {
			return nil, err
		}
		opts = append(opts, jwt.WithKeySet(keys, jws.WithInferAlgorithmFromKey(true), jws.WithRequireKid(false)))
	default:
		sets, err := v.keySets(ctx)
		if err != nil {
			return nil, v.keysUnavailable(err)
		}
		// A key without an alg of its own allows only the algorithms of
		// its type (RS*/PS* for RSA, ES* for EC, EdDSA for OKP).
		for _, set := range sets {
			opts = append(opts, jwt.WithKeySet(set, jws.WithInferAlgorithmFromKey(true), jws.WithRequireKid(false)))
		}
	}
	tok, err := jwt.ParseString(token, opts...)
	switch {
	case err == nil:
		return tok, nil
	case errors.Is(err, jws.VerifyError()), errors.Is(err, jws.VerificationError()):
		return nil, refused(ReasonSignature, "the token's signature does not verify with hbgraph's keys")
	}
	return nil, refused(ReasonClaims, "the token's claims do not decode: a JSON object whose exp, nbf and iat are numbers and whose aud is a string or a list of strings")
}

// keysFor are the keys a token naming kid may be verified with: the key
// whose id is kid, in the file's set or the URL's, the URL's set fetched
// again on a miss (at most once per MinRefreshGap) since the provider may
// have rotated its keys; failing that, the keys that have no id (PEM
// public keys), which no kid can name.
func (v *Verifier) keysFor(ctx context.Context, kid string) (jwk.Set, error) {
	var sets []jwk.Set
	for attempt := 0; attempt < 2; attempt++ {
		var err error
		if sets, err = v.keySets(ctx); err != nil {
			return nil, v.keysUnavailable(err)
		}
		for _, set := range sets {
			if k, found := set.LookupKeyID(kid); found {
				return oneSet(k), nil
			}
		}
		if attempt > 0 || v.cache == nil || !v.refresh(ctx) {
			break
		}
	}
	unnamed := jwk.NewSet()
	for _, set := range sets {
		for i := range set.Len() {
			if k, _ := set.Key(i); k != nil {
				if _, named := k.KeyID(); !named {
					_ = unnamed.AddKey(k)
				}
			}
		}
	}
	if unnamed.Len() == 0 {
		return nil, refused(ReasonUnknownKeyID, "the token's key id (kid) names no key hbgraph holds")
	}
	return unnamed, nil
}

func oneSet(k jwk.Key) jwk.Set {
	set := jwk.NewSet()
	_ = set.AddKey(k)
	return set
}

// keysUnavailable logs why the key set could not be had (the client is
// told only that).
func (v *Verifier) keysUnavailable(err error) error {
	v.log.Warn().Err(err).Msg("no key set to verify a token with")
	return refused(ReasonKeysUnavailable, "hbgraph has no keys to verify the token with at the moment")
}

// validate checks tok's claims. exp is required (RFC 8725 3.10 leaves a
// token that never expires to the recipient to refuse), and its lifetime
// bounded when MaxTokenLifetime is set.
func (v *Verifier) validate(tok jwt.Token) error {
	exp, ok := tok.Expiration()
	if !ok {
		return refused(ReasonNoExpiry, "the token has no expiry (exp); hbgraph accepts only tokens that expire")
	}
	opts := []jwt.ValidateOption{jwt.WithAcceptableSkew(v.cfg.Leeway)}
	if v.cfg.Issuer != "" {
		opts = append(opts, jwt.WithIssuer(v.cfg.Issuer))
	}
	if v.cfg.Audience != "" {
		opts = append(opts, jwt.WithAudience(v.cfg.Audience))
	}
	if err := jwt.Validate(tok, opts...); err != nil {
		switch {
		case errors.Is(err, jwt.TokenExpiredError()):
			return refused(ReasonExpired, "the token has expired (exp)")
		case errors.Is(err, jwt.TokenNotYetValidError()):
			return refused(ReasonNotYetValid, "the token is not valid yet (nbf)")
		case errors.Is(err, jwt.InvalidIssuedAtError()):
			return refused(ReasonIssuedInFuture, "the token says it was issued in the future (iat)")
		case errors.Is(err, jwt.InvalidIssuerError()):
			return refused(ReasonIssuer, "the token's issuer (iss) is not %q", v.cfg.Issuer)
		case errors.Is(err, jwt.InvalidAudienceError()):
			return refused(ReasonAudience, "the token's audience (aud) does not include %q", v.cfg.Audience)
		}
		return refused(ReasonClaims, "the token's claims are not valid")
	}
	if max := v.cfg.MaxTokenLifetime; max > 0 {
		iat, hasIAT := tok.IssuedAt()
		if lifetime(exp, iat, hasIAT, time.Now()) > max {
			return refused(ReasonLifetime, "the token lives longer (exp - iat) than the %s hbgraph accepts", max)
		}
	}
	return nil
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
