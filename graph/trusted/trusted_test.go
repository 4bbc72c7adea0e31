package trusted

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/99designs/gqlgen/graphql"

	"github.com/hbgraph/hbgraph/auth"
	"github.com/hbgraph/hbgraph/graph/codes"
)

const listed = "query Me { node(id: \"me\") { id } }"

func writeManifest(t *testing.T, ops ...map[string]string) string {
	t.Helper()
	b, err := json.Marshal(map[string]any{"format": manifestFormat, "version": 1, "operations": ops})
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "manifest.json")
	if err := os.WriteFile(path, b, 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

func TestLoadChecksIDs(t *testing.T) {
	m, err := Load(writeManifest(t, map[string]string{"id": ID(listed), "name": "Me", "type": "query", "body": listed}))
	if err != nil || m[ID(listed)] != listed {
		t.Fatalf("Load: %v %v", m, err)
	}
	if _, err := Load(writeManifest(t, map[string]string{"id": strings.Repeat("0", 64), "body": listed})); err == nil {
		t.Error("an id that is not the body's sha256 was accepted")
	}
	path := filepath.Join(t.TempDir(), "other.json")
	os.WriteFile(path, []byte(`{"format":"something-else","version":1,"operations":[]}`), 0o600)
	if _, err := Load(path); err == nil {
		t.Error("another format was accepted")
	}
}

func TestExtension(t *testing.T) {
	m := Manifest{ID(listed): listed}
	other := "{ node(id: \"x\") { id } }"
	byID := func(id string) map[string]any {
		return map[string]any{"persistedQuery": map[string]any{"version": 1.0, "sha256Hash": id}}
	}
	anonymous := auth.With(context.Background(), auth.Principal{})
	admin := auth.With(context.Background(), auth.Principal{Subject: "root", Admin: true})
	everyone := auth.With(context.Background(), auth.Everyone)
	for _, tc := range []struct {
		name      string
		only      bool
		ctx       context.Context
		query     string
		ext       map[string]any
		wantQuery string
		refused   bool
	}{
		{"listed id", false, anonymous, "", byID(ID(listed)), listed, false},
		{"listed id, only", true, anonymous, "", byID(ID(listed)), listed, false},
		{"listed body, only", true, anonymous, listed, nil, listed, false},
		{"other body", false, anonymous, other, nil, other, false},
		{"other body, only", true, anonymous, other, nil, other, true},
		{"other body with its hash, only", true, anonymous, other, byID(ID(other)), other, true},
		{"unknown id", false, anonymous, "", byID(ID(other)), "", false},
		{"unknown id, only", true, anonymous, "", byID(ID(other)), "", true},
		{"other body, only, admin token", true, admin, other, nil, other, false},
		{"other body, only, authentication off", true, everyone, other, nil, other, true},
	} {
		raw := &graphql.RawParams{Query: tc.query, Extensions: tc.ext}
		err := Extension{Manifest: m, Only: tc.only}.MutateOperationParameters(tc.ctx, raw)
		if (err != nil) != tc.refused {
			t.Errorf("%s: error %v, want refused=%v", tc.name, err, tc.refused)
		}
		if err != nil && err.Extensions["code"] != codes.PersistedQueryNotInList {
			t.Errorf("%s: code %v", tc.name, err.Extensions["code"])
		}
		if raw.Query != tc.wantQuery {
			t.Errorf("%s: query %q, want %q", tc.name, raw.Query, tc.wantQuery)
		}
	}
}
