package backup

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/99designs/gqlgen/graphql"
	"github.com/vektah/gqlparser/v2/ast"
)

func opContext(op ast.Operation) context.Context {
	return graphql.WithOperationContext(context.Background(),
		&graphql.OperationContext{Operation: &ast.OperationDefinition{Operation: op}})
}

// TestGatePausesMutationsOnly: pause waits for the mutation in flight,
// holds new mutations until resumed, and lets queries through.
func TestGatePausesMutationsOnly(t *testing.T) {
	g := &Gate{}
	inFlight, release := make(chan struct{}), make(chan struct{})
	go g.InterceptRootField(opContext(ast.Mutation), func(context.Context) graphql.Marshaler {
		close(inFlight)
		<-release
		return graphql.Null
	})
	<-inFlight
	paused := make(chan func())
	go func() { paused <- g.pause() }()
	select {
	case <-paused:
		t.Fatal("pause returned while a mutation was in flight")
	case <-time.After(50 * time.Millisecond):
	}
	close(release)
	resume := <-paused

	ran := make(chan struct{})
	go g.InterceptRootField(opContext(ast.Mutation), func(context.Context) graphql.Marshaler {
		close(ran)
		return graphql.Null
	})
	queried := make(chan struct{})
	go g.InterceptRootField(opContext(ast.Query), func(context.Context) graphql.Marshaler {
		close(queried)
		return graphql.Null
	})
	select {
	case <-queried:
	case <-time.After(5 * time.Second):
		t.Fatal("a query waited for the backup")
	}
	select {
	case <-ran:
		t.Fatal("a mutation ran while paused")
	case <-time.After(50 * time.Millisecond):
	}
	resume()
	select {
	case <-ran:
	case <-time.After(5 * time.Second):
		t.Fatal("the mutation did not run once resumed")
	}
}

func TestInside(t *testing.T) {
	dir := t.TempDir()
	link := filepath.Join(t.TempDir(), "link")
	if err := os.Symlink(dir, link); err != nil {
		t.Fatal(err)
	}
	for p, want := range map[string]bool{
		dir:                                   true,
		filepath.Join(dir, "b"):               true,
		filepath.Join(dir, "new", "deeper"):   true,
		filepath.Join(link, "b"):              true, // through a symbolic link
		filepath.Join(dir, "..", "elsewhere"): false,
		dir + "-sibling":                      false,
		"/":                                   false,
	} {
		if got := Inside(p, dir); got != want {
			t.Errorf("Inside(%q, %q) = %v, want %v", p, dir, got, want)
		}
	}
}
