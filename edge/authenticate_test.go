package edge

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/hbgraph/hbgraph/auth"
)

// fakeVerifier accepts the token "good" as alice and refuses every other
// with a bad signature; it counts the tokens it checked.
type fakeVerifier struct{ checked int }

func (f *fakeVerifier) Verify(_ context.Context, token string) (auth.Principal, error) {
	f.checked++
	if token == "good" {
		return auth.Principal{Subject: "alice"}, nil
	}
	return auth.Principal{}, &auth.TokenError{Reason: auth.ReasonSignature, Message: "the token's signature does not verify with hbgraph's keys"}
}

// TestRefusedTokensCountAgainstTheAddress: every 401 takes a token from
// its address's bucket before the token is checked; past the burst the
// address gets 429 and its tokens are not checked at all; a valid token
// gives its charge back; another address is not affected.
func TestRefusedTokensCountAgainstTheAddress(t *testing.T) {
	now := time.Unix(1_700_000_000, 0)
	v := &fakeVerifier{}
	var refused, limited []string
	a := Authenticate{
		Verifier: v,
		Refusals: RateLimit{Rate: 1, Burst: 3, now: func() time.Time { return now },
			OnLimit: func(r *http.Request) { limited = append(limited, ClientAddress(r)) }},
		OnRefused: func(_ *http.Request, class, reason string) { refused = append(refused, class+"/"+reason) },
	}
	h := a.Middleware(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(http.StatusOK) }))
	do := func(addr, authorization string) *httptest.ResponseRecorder {
		r := httptest.NewRequest(http.MethodPost, "/query", nil)
		r.RemoteAddr = addr
		if authorization != "" {
			r.Header.Set("Authorization", authorization)
		}
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		return w
	}
	// Valid tokens cost the address nothing.
	for i := range 10 {
		if w := do("10.0.0.1:1", "Bearer good"); w.Code != http.StatusOK {
			t.Fatalf("valid token %d: %d %s", i, w.Code, w.Body)
		}
	}
	// Anonymous requests are the per-client limit's business, not this one's.
	for range 10 {
		if w := do("10.0.0.1:1", ""); w.Code != http.StatusOK {
			t.Fatalf("anonymous: %d", w.Code)
		}
	}
	v.checked = 0
	for i, authz := range []string{"Bearer bad", "Basic x", "Bearer bad"} {
		if w := do("10.0.0.1:2", authz); w.Code != http.StatusUnauthorized || !strings.Contains(w.Body.String(), "signature does not verify") && authz != "Basic x" {
			t.Fatalf("refusal %d: %d %s", i, w.Code, w.Body)
		}
	}
	for i := range 50 {
		w := do("10.0.0.1:3", "Bearer bad")
		if w.Code != http.StatusTooManyRequests || w.Header().Get("Retry-After") != "1" || !strings.Contains(w.Body.String(), "RATE_LIMITED") {
			t.Fatalf("bad token %d past the burst: %d, Retry-After %q: %s", i, w.Code, w.Header().Get("Retry-After"), w.Body)
		}
	}
	if v.checked != 2 {
		t.Errorf("%d tokens checked, want 2: past the burst none is", v.checked)
	}
	if w := do("10.0.0.1:1", "Bearer good"); w.Code != http.StatusTooManyRequests {
		t.Errorf("a valid token from an address over its refusals: %d", w.Code)
	}
	if w := do("10.0.0.2:1", "Bearer bad"); w.Code != http.StatusUnauthorized {
		t.Errorf("another address: %d", w.Code)
	}
	if strings.Join(refused, " ") != "invalid/bad_signature malformed/malformed_header invalid/bad_signature invalid/bad_signature" {
		t.Errorf("OnRefused saw %q", refused)
	}
	if len(limited) != 51 {
		t.Errorf("OnLimit called %d times, want 51", len(limited))
	}
	now = now.Add(time.Second) // one token back
	if w := do("10.0.0.1:1", "Bearer good"); w.Code != http.StatusOK {
		t.Errorf("a valid token a second later: %d", w.Code)
	}
	if w := do("10.0.0.1:1", "Bearer good"); w.Code != http.StatusOK {
		t.Errorf("its charge was not given back: %d", w.Code)
	}
	if w := do("10.0.0.1:1", "Bearer bad"); w.Code != http.StatusUnauthorized {
		t.Errorf("a bad token with a token in the bucket: %d", w.Code)
	}
	if w := do("10.0.0.1:1", "Bearer bad"); w.Code != http.StatusTooManyRequests {
		t.Errorf("a bad token with the bucket empty again: %d", w.Code)
	}
}

// TestMissingTokenCounts: with ReadsNeedToken a request without a token is
// a refusal too, and counts.
func TestMissingTokenCounts(t *testing.T) {
	now := time.Unix(1_700_000_000, 0)
	a := Authenticate{Verifier: &fakeVerifier{}, ReadsNeedToken: true, Refusals: RateLimit{Rate: 1, Burst: 2, now: func() time.Time { return now }}}
	h := a.Middleware(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(http.StatusOK) }))
	var got []int
	for range 3 {
		r := httptest.NewRequest(http.MethodPost, "/query", nil)
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		got = append(got, w.Code)
	}
	if got[0] != 401 || got[1] != 401 || got[2] != 429 {
		t.Errorf("statuses %v, want 401 401 429", got)
	}
}
