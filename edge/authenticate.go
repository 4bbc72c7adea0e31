package edge

import (
	"context"
	"fmt"
	"net/http"
	"strings"

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
	// OnRefused, if set, is called with the reason of each request refused.
	OnRefused func(reason string)
	// OnAuthenticated, if set, is called with each caller whose token
	// verified (the request log names its subject).
	OnAuthenticated func(ctx context.Context, p auth.Principal)
}

// Middleware is a's handler in front of next.
func (a Authenticate) Middleware(next http.Handler) http.Handler {
	if a.Verifier == nil {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			next.ServeHTTP(w, r.WithContext(auth.With(r.Context(), auth.Everyone)))
		})
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		header := r.Header.Values("Authorization")
		if len(header) == 0 {
			if a.ReadsNeedToken {
				a.refuse(w, r, "missing", `Bearer realm="hbgraph"`, "authentication required: send Authorization: Bearer <token>")
				return
			}
			next.ServeHTTP(w, r.WithContext(auth.With(r.Context(), auth.Principal{})))
			return
		}
		token, ok := bearer(header)
		if !ok {
			a.refuse(w, r, "malformed", `Bearer realm="hbgraph", error="invalid_request"`, "the Authorization header must be one \"Bearer <token>\"")
			return
		}
		p, err := a.Verifier.Verify(r.Context(), token)
		if err != nil {
			a.refuse(w, r, "invalid", `Bearer realm="hbgraph", error="invalid_token"`, err.Error())
			return
		}
		if a.OnAuthenticated != nil {
			a.OnAuthenticated(r.Context(), p)
		}
		next.ServeHTTP(w, r.WithContext(auth.With(r.Context(), p)))
	})
}

// bearer is the token of a single "Bearer <token>" header (RFC 6750; the
// scheme is case-insensitive).
func bearer(header []string) (string, bool) {
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

func (a Authenticate) refuse(w http.ResponseWriter, r *http.Request, reason, challenge, message string) {
	if a.OnRefused != nil {
		a.OnRefused(reason)
	}
	w.Header().Set("WWW-Authenticate", challenge)
	jsonpost.RefuseWith(w, r, http.StatusUnauthorized, codes.Unauthenticated, fmt.Sprintf("unauthenticated: %s", message))
}
