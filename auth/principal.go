// Package auth says who is calling and what they may do: it verifies the
// caller's bearer token (a JWT, with lestrrat-go/jwx) into a Principal,
// carries it in the request's context, and decides whether a principal may
// write what a node's owner may write.
package auth

import (
	"context"
	"errors"
	"slices"
	"time"
)

// Principal is the caller of one request.
type Principal struct {
	// Subject is the token's sub claim; empty for an anonymous caller and
	// when authentication is off.
	Subject string
	// Scopes are the token's scope (space-separated) or scp claim.
	Scopes []string
	// Admin: the token holds the admin scope, or authentication is off
	// (everyone is admin then, so a local `go run .` works unchanged).
	Admin bool
	// Expires is the token's exp (zero without a token): a connection that
	// outlives its request, a subscription's socket, ends with it.
	Expires time.Time
}

// Authenticated reports whether the caller presented a valid token (or
// authentication is off).
func (p Principal) Authenticated() bool { return p.Subject != "" || p.Admin }

// HasScope reports whether the token granted scope.
func (p Principal) HasScope(scope string) bool { return slices.Contains(p.Scopes, scope) }

// Everyone is the principal of every request while authentication is off.
var Everyone = Principal{Admin: true}

type principalKey struct{}

// With returns ctx carrying p.
func With(ctx context.Context, p Principal) context.Context {
	return context.WithValue(ctx, principalKey{}, p)
}

// From returns the principal ctx carries; a context without one is an
// anonymous caller's, never an admin's.
func From(ctx context.Context) Principal {
	p, _ := ctx.Value(principalKey{}).(Principal)
	return p
}

var (
	// ErrUnauthenticated: the operation needs a valid token and the caller
	// sent none.
	ErrUnauthenticated = errors.New("authentication required: send Authorization: Bearer <token>")
	// ErrForbidden: the caller is authenticated but may not do this.
	ErrForbidden = errors.New("forbidden")
)

// MayCreate allows an authenticated caller to create a node, which it will
// own.
func MayCreate(p Principal) error {
	if !p.Authenticated() {
		return ErrUnauthenticated
	}
	return nil
}

// MayWrite decides whether p may change what belongs to a node whose
// owner is owner (the node, its outgoing relationships, its articles):
// its owner or an admin may. A node nobody owns (created while
// authentication was off, or imported without an owner) only admins may
// change.
func MayWrite(p Principal, owner string) error {
	switch {
	case p.Admin:
		return nil
	case p.Subject == "":
		return ErrUnauthenticated
	case owner != "" && owner == p.Subject:
		return nil
	}
	return ErrForbidden
}

// MaySeeOwner decides whether p may read a node's owner: its owner and
// admins may.
func MaySeeOwner(p Principal, owner string) bool {
	return p.Admin || (p.Subject != "" && p.Subject == owner)
}
