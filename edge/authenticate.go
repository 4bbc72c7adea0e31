package edge

import (
	"context"
	"errors"
	"net"
	"net/http"
	"strings"
	"time"

	"github.com/hbgraph/hbgraph/auth"
	"github.com/hbgraph/hbgraph/graph/codes"
	"github.com/hbgraph/hbgraph/graph/jsonpost"
)

// TokenVerifier checks a bearer token; *auth.Verifier is one.
type TokenVerifier interface {
	Verify(ctx context.Context, token string) (auth.Principal, error)
}

// Authenticate puts the caller in each request's context (auth.From).
// With no Verifier authentication is off and every caller is
// auth.Everyone. Otherwise a request without Authorization is anonymous
// (refused when ReadsNeedToken), and one whose token does not verify is
// refused with 401 and WWW-Authenticate: never treated as anonymous.
type Authenticate struct {
	Verifier       TokenVerifier
	ReadsNeedToken bool
	// Refusals bounds the 401s of each client address (Key: nil, the
	// address): a request that could be refused (one with Authorization,
	// or any with ReadsNeedToken) takes a token from its address's bucket
	// before its token is checked, and gives it back if the token
	// verifies. An address whose bucket is empty is answered 429 without
	// its token being checked, so bad tokens cannot make hbgraph spend its
	// CPU on signatures. A zero Rate bounds nothing.
	Refusals RateLimit
	// OnRefused, if set, is called with each request refused: class is
	// missing, malformed or invalid (a bounded set, for metrics), reason
	// says which check failed (auth.TokenError's Reason, for the log).
	OnRefused func(r *http.Request, class, reason string)
	// OnAuthenticated, if set, is called with each caller whose token
	// verified (the request log names its subject).
	OnAuthenticated func(ctx context.Context, p auth.Principal)
}

// Middleware is a's handler in front of next.
func (a Authenticate) Middleware(next http.Handler) http.Handler {
	if a.Verifier == nil {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if isEveryone(auth.From(r.Context())) { // the server's BaseContext said so
				next.ServeHTTP(w, r)
				return
			}
			next.ServeHTTP(w, r.WithContext(auth.With(r.Context(), auth.Everyone)))
		})
	}
	refusals := a.Refusals.buckets()
	if a.Refusals.Key == nil {
		a.Refusals.Key = ClientAddress
	}
	if a.Refusals.now == nil {
		a.Refusals.now = time.Now
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		header := r.Header.Values("Authorization")
		if len(header) == 0 && !a.ReadsNeedToken {
			next.ServeHTTP(w, r.WithContext(auth.With(r.Context(), auth.Principal{})))
			return
		}
		// Charged before the token is looked at: kept if it is refused.
		var charged string
		if refusals != nil {
			charged = a.Refusals.Key(r)
			if wait := refusals.take(charged, a.Refusals.now()); wait > 0 {
				a.Refusals.refuse(w, r, wait)
				return
			}
		}
		if len(header) == 0 {
			a.refuse(w, r, "missing", "missing", `Bearer realm="hbgraph"`, "authentication required: send Authorization: Bearer <token>")
			return
		}
		token, ok := Bearer(header)
		if !ok {
			a.refuse(w, r, "malformed", "malformed_header", `Bearer realm="hbgraph", error="invalid_request"`, "the Authorization header must be one \"Bearer <token>\"")
			return
		}
		p, err := a.Verifier.Verify(r.Context(), token)
		if err != nil {
			reason, message := "invalid", "the token does not verify"
			if te := (*auth.TokenError)(nil); errors.As(err, &te) {
				reason, message = te.Reason, te.Message
			}
			a.refuse(w, r, "invalid", reason, `Bearer realm="hbgraph", error="invalid_token"`, message)
			return
		}
		if refusals != nil {
			refusals.giveBack(charged, a.Refusals.now()) // a valid token spends its subject's bucket instead
		}
		if a.OnAuthenticated != nil {
			a.OnAuthenticated(r.Context(), p)
		}
		next.ServeHTTP(w, r.WithContext(auth.With(r.Context(), p)))
	})
}

// Bearer is the token of a single "Bearer <token>" header (RFC 6750; the
// scheme is case-insensitive).
func Bearer(header []string) (string, bool) {
	if len(header) != 1 {
		return "", false
	}
	scheme, token, ok := strings.Cut(header[0], " ")
	token = strings.TrimSpace(token)
	if !ok || !strings.EqualFold(scheme, "Bearer") || token == "" || strings.ContainsAny(token, " \t") {
		return "", false
	}
	return token, true
}

func (a Authenticate) refuse(w http.ResponseWriter, r *http.Request, class, reason, challenge, message string) {
	if a.OnRefused != nil {
		a.OnRefused(r, class, reason)
	}
	w.Header().Set("WWW-Authenticate", challenge)
	jsonpost.RefuseWith(w, r, http.StatusUnauthorized, codes.Unauthenticated, "unauthenticated: "+message)
}

// BaseContext is the http.Server's BaseContext for a server that
// authenticates (authOn) or not. Without authentication every request's
// principal is auth.Everyone: set once in the base context of every
// connection, the middleware need not add it to each request (a context,
// the principal boxed, a copy of the request). With it, nil: the
// middleware sets each request's principal.
func BaseContext(authOn bool) func(net.Listener) context.Context {
	if authOn {
		return nil
	}
	base := auth.With(context.Background(), auth.Everyone)
	return func(net.Listener) context.Context { return base }
}

// isEveryone tells whether p is auth.Everyone.
func isEveryone(p auth.Principal) bool {
	return p.Admin && p.Subject == "" && p.Scopes == nil && p.Expires.IsZero()
}
