package auth

import (
	"fmt"
	"time"
	"unicode"
	"unicode/utf8"
)

// TokenError is why a token was refused: Reason, a fixed word, for the log
// and metrics; Message, in our words, for the client. It never carries the
// token, a claim's value or a library's error. errors.Is(err,
// ErrInvalidToken) holds for every TokenError.
type TokenError struct {
	Reason  string
	Message string
}

func (e *TokenError) Error() string { return e.Message }
func (e *TokenError) Unwrap() error { return ErrInvalidToken }

// The reasons a token is refused.
const (
	ReasonMalformed       = "malformed"        // not a compact JWS, or its header does not decode
	ReasonAlgorithm       = "unsupported_alg"  // alg none or absent
	ReasonCrit            = "unsupported_crit" // a crit header parameter: we understand none
	ReasonUnknownKeyID    = "unknown_kid"      // kid names no key, even after a refresh
	ReasonKeysUnavailable = "keys_unavailable" // the key set could not be had
	ReasonSignature       = "bad_signature"
	ReasonClaims          = "bad_claims" // the payload is no JSON object of well-typed claims
	ReasonNoExpiry        = "no_exp"
	ReasonExpired         = "expired"
	ReasonNotYetValid     = "not_yet_valid"
	ReasonIssuedInFuture  = "iat_in_future"
	ReasonIssuer          = "wrong_issuer"
	ReasonAudience        = "wrong_audience"
	ReasonLifetime        = "lifetime_too_long"
	ReasonNoSubject       = "no_sub"
	ReasonSubject         = "bad_sub"
)

func refused(reason, format string, args ...any) error {
	return &TokenError{Reason: reason, Message: fmt.Sprintf(format, args...)}
}

// MaxSubjectBytes bounds a token's sub: it is stored as a node's owner and
// logged with each request.
const MaxSubjectBytes = 256

// validSubject reports whether sub may name a caller: valid UTF-8 of at
// most MaxSubjectBytes bytes without control characters (Cc: NUL, newline,
// ANSI escapes), format characters (Cf: the bidirectional overrides and
// isolates, zero-width characters), line and paragraph separators, or
// U+FFFD. Such a subject would be stored as an owner and written into logs
// as is. U+FFFD is what the JSON decoder makes of invalid UTF-8 and lone
// surrogates: two different raw subjects would become one owner.
func validSubject(sub string) bool {
	if len(sub) > MaxSubjectBytes || !utf8.ValidString(sub) {
		return false
	}
	for _, r := range sub {
		if r == utf8.RuneError || unicode.In(r, unicode.Cc, unicode.Cf, unicode.Zl, unicode.Zp) {
			return false
		}
	}
	return true
}

// lifetime is how long tok lives: exp - iat, or exp - now without an iat.
func lifetime(exp, iat time.Time, hasIAT bool, now time.Time) time.Duration {
	if hasIAT {
		return exp.Sub(iat)
	}
	return exp.Sub(now)
}
