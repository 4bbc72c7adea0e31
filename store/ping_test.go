package store

import (
	"context"
	"errors"
	"testing"

	"github.com/rs/zerolog"

	"github.com/hbgraph/hbgraph/store/embedded"
	"github.com/hbgraph/hbgraph/store/keys"
)

func TestPing(t *testing.T) {
	db, err := embedded.Open(embedded.Options{Tables: keys.Tables(), Logger: zerolog.Nop()})
	if err != nil {
		t.Fatal(err)
	}
	st, err := New(db, Options{})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if err := st.Ping(ctx); err != nil {
		t.Fatalf("Ping of an open store: %v", err)
	}
	db.Close()
	if err := st.Ping(ctx); !errors.Is(err, ErrUnavailable) {
		t.Fatalf("Ping of a closed store: %v, want ErrUnavailable", err)
	}
}
