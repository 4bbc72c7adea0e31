package limits_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

	"github.com/99designs/gqlgen/graphql"
	"github.com/99designs/gqlgen/graphql/handler"
	"github.com/99designs/gqlgen/graphql/handler/extension"
	"github.com/99designs/gqlgen/graphql/handler/lru"
	"github.com/99designs/gqlgen/graphql/handler/transport"
	"github.com/vektah/gqlparser/v2/ast"
	"github.com/vektah/gqlparser/v2/gqlerror"

	"github.com/hbgraph/hbgraph/auth"
	"github.com/hbgraph/hbgraph/graph/codes"
	"github.com/hbgraph/hbgraph/graph/errcode"
	"github.com/hbgraph/hbgraph/graph/generated"
	"github.com/hbgraph/hbgraph/graph/limits"
	"github.com/hbgraph/hbgraph/graph/resolvers"
	"github.com/hbgraph/hbgraph/internal/memstore"
	"github.com/hbgraph/hbgraph/loaders"
	"github.com/hbgraph/hbgraph/store"
)

// gateway is the GraphQL handler as server.go's newGateway builds it
// (gqlgen's POST transport, an LRU query cache, the APQ extension, the
// limits, the loaders), over an in-memory store, with an error presenter
// that counts what server.go would answer INTERNAL and a recover func that
// counts panics.
type gateway struct {
	http.Handler
	st        *store.Store
	internals atomic.Int64
	panics    atomic.Int64
}

func newGateway(tb testing.TB, cfg limits.Config) *gateway {
	tb.Helper()
	st, _ := memstore.New(tb)
	g := &gateway{st: st}
	gql := handler.New(generated.NewExecutableSchema(generated.Config{
		Resolvers:  &resolvers.Resolver{Store: st},
		Complexity: limits.Pricing(),
	}))
	gql.AddTransport(transport.POST{})
	cache := lru.New[*ast.QueryDocument](1000)
	gql.SetQueryCache(cache)
	gql.SetParserTokenLimit(cfg.Tokens)
	gql.Use(extension.Introspection{})
	gql.Use(extension.AutomaticPersistedQuery{Cache: lru.New[string](100)})
	gql.Use(limits.New(cfg, cache))
	gql.SetErrorPresenter(func(ctx context.Context, err error) *gqlerror.Error {
		gerr := graphql.DefaultErrorPresenter(ctx, err)
		code, given := errcode.Of(err, gerr) // the server's policy
		if given {
			return gerr
		}
		if code == codes.Internal {
			g.internals.Add(1)
		}
		if gerr.Extensions == nil {
			gerr.Extensions = map[string]any{}
		}
		gerr.Extensions["code"] = code
		return gerr
	})
	gql.SetRecoverFunc(func(_ context.Context, v any) error {
		g.panics.Add(1)
		return fmt.Errorf("panic: %v", v)
	})
	g.Handler = loaders.Middleware(st, loaders.Config{Wait: time.Millisecond, BatchSize: 1000, ScanConcurrency: 1}, gql)
	return g
}

type gqlError struct {
	Message    string `json:"message"`
	Extensions struct {
		Code string `json:"code"`
	} `json:"extensions"`
}

type response struct {
	Status int
	Data   json.RawMessage `json:"data"`
	Errors []gqlError      `json:"errors"`
	Size   int
}

// post sends query and variables (nil, or a JSON object's text) and
// decodes the answer.
func (g *gateway) post(tb testing.TB, query string, variables string) response {
	tb.Helper()
	body := map[string]any{"query": query}
	if variables != "" {
		body["variables"] = json.RawMessage(variables)
	}
	raw, err := json.Marshal(body)
	if err != nil {
		tb.Fatal(err)
	}
	return g.postRaw(tb, raw)
}

func (g *gateway) postRaw(tb testing.TB, body []byte) response {
	tb.Helper()
	r := httptest.NewRequest(http.MethodPost, "/query", bytes.NewReader(body))
	r.Header.Set("Content-Type", "application/json")
	// As the server does with authentication off: every caller is admin.
	r = r.WithContext(auth.With(r.Context(), auth.Everyone))
	w := httptest.NewRecorder()
	g.ServeHTTP(w, r)
	var resp response
	if err := json.Unmarshal(w.Body.Bytes(), &resp); err != nil {
		tb.Fatalf("answer is not JSON (%v): %.300s", err, w.Body.String())
	}
	resp.Status, resp.Size = w.Code, w.Body.Len()
	return resp
}

// only returns the answer's one error, or fails.
func (r response) only(tb testing.TB) gqlError {
	tb.Helper()
	if len(r.Errors) != 1 {
		tb.Fatalf("want one error, got %d: %+v", len(r.Errors), r.Errors)
	}
	return r.Errors[0]
}
