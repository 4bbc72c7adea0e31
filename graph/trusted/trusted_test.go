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
	if err != nil || m[ID(listed)] != (Operation{Name: "Me", Type: "query", Body: listed}) {
		t.Fatalf("Load: %v %v", m, err)
	}
	if _, err := Load(writeManifest(t, map[string]string{"id": strings.Repeat("0", 64), "name": "Me", "type": "query", "body": listed})); err == nil {
		t.Error("an id that is not the body's sha256 was accepted")
	}
	path := filepath.Join(t.TempDir(), "other.json")
	os.WriteFile(path, []byte(`{"format":"something-else","version":1,"operations":[]}`), 0o600)
	if _, err := Load(path); err == nil {
		t.Error("another format was accepted")
	}
}

func TestExtension(t *testing.T) {
	m := Manifest{ID(listed): {Name: "Me", Type: "query", Body: listed}}
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

// TestLoadRefusesWhatTheEntryDoesNotName: a body must define exactly the
// one operation its entry names, of its type; else a client could pick
// another by operationName (issue 22, item 10).
func TestLoadRefusesWhatTheEntryDoesNotName(t *testing.T) {
	for _, tc := range []struct{ name, entryName, entryType, body string }{
		{"a second operation", "A", "query", "query A { __typename } mutation B { deleteNode(id: \"x\") }"},
		{"a second query", "A", "query", "query A { __typename } query B { __typename }"},
		{"another name", "A", "query", "query B { __typename }"},
		{"another type", "A", "query", "mutation A { deleteNode(id: \"x\") }"},
		{"anonymous, entry named", "A", "query", "{ __typename }"},
		{"no operation", "A", "query", "fragment F on Query { __typename }"},
		{"unknown type", "A", "update", "query A { __typename }"},
		{"no type", "A", "", "query A { __typename }"},
		{"does not parse", "A", "query", "query A {"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Load(writeManifest(t, map[string]string{"id": ID(tc.body), "name": tc.entryName, "type": tc.entryType, "body": tc.body}))
			if err == nil {
				t.Errorf("%q listed as %s %q was accepted", tc.body, tc.entryType, tc.entryName)
			}
		})
	}
	withFragment := "query A { ...F } fragment F on Query { __typename }"
	if _, err := Load(writeManifest(t, map[string]string{"id": ID(withFragment), "name": "A", "type": "query", "body": withFragment})); err != nil {
		t.Errorf("one operation with its fragment: %v", err)
	}
}

// TestExtensionKeepsTheListedOperation: sent by id, only the listed
// operation's name may be given.
func TestExtensionKeepsTheListedOperation(t *testing.T) {
	m := Manifest{ID(listed): {Name: "Me", Type: "query", Body: listed}}
	ext := map[string]any{"persistedQuery": map[string]any{"version": 1.0, "sha256Hash": ID(listed)}}
	for name, refused := range map[string]bool{"": false, "Me": false, "B": true} {
		raw := &graphql.RawParams{OperationName: name, Extensions: ext}
		err := Extension{Manifest: m}.MutateOperationParameters(context.Background(), raw)
		if (err != nil) != refused {
			t.Errorf("operationName %q: error %v, want refused=%v", name, err, refused)
		}
		if err != nil && (raw.Query != "" || strings.Contains(err.Message, name)) {
			t.Errorf("operationName %q: query %q, message %q", name, raw.Query, err.Message)
		}
	}
}
