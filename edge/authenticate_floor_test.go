package edge

import (
	"context"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/hbgraph/hbgraph/auth"
)

// Without authentication every request is auth.Everyone's: from the
// server's base context when it set one (no copy of the request, no
// allocation), from the middleware otherwise.
func TestEveryoneFromTheBaseContext(t *testing.T) {
	var got *http.Request
	h := Authenticate{}.Middleware(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { got = r }))
	base := BaseContext(false)(nil)
	r := httptest.NewRequest(http.MethodPost, "/query", nil).WithContext(base)
	h.ServeHTTP(httptest.NewRecorder(), r)
	if got != r || !isEveryone(auth.From(got.Context())) {
		t.Errorf("with the base context: request copied (%v) or principal %+v", got != r, auth.From(got.Context()))
	}
	w := httptest.NewRecorder()
	if n := testing.AllocsPerRun(100, func() { h.ServeHTTP(w, r) }); n != 0 {
		t.Errorf("with the base context: %.0f allocations, want 0", n)
	}
	for _, ctx := range []context.Context{context.Background(), auth.With(context.Background(), auth.Principal{Subject: "x"}),
		auth.With(context.Background(), auth.Principal{Admin: true, Scopes: []string{"a"}})} {
		r := httptest.NewRequest(http.MethodPost, "/query", nil).WithContext(ctx)
		h.ServeHTTP(httptest.NewRecorder(), r)
		if p := auth.From(got.Context()); !isEveryone(p) || p.Subject != "" || p.Scopes != nil {
			t.Errorf("without it: principal %+v, want Everyone", p)
		}
	}
	if BaseContext(true) != nil {
		t.Error("a server that authenticates has a base context with a principal")
	}
}
