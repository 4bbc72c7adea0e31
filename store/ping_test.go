package store

import (
	"context"
	"errors"
	"testing"
)

func TestPing(t *testing.T) {
	db := openTestEngine(t, nil)
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
