// Package trusted serves operations from a trusted documents manifest
// (Apollo's persisted query manifest) and, when told to, refuses every
// other operation: a client built against the manifest sends ids, and
// nobody can run a document its developers did not ship.
package trusted

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"

	"github.com/99designs/gqlgen/graphql"
	"github.com/vektah/gqlparser/v2/ast"
	"github.com/vektah/gqlparser/v2/gqlerror"
	"github.com/vektah/gqlparser/v2/parser"

	"github.com/hbgraph/hbgraph/auth"
	"github.com/hbgraph/hbgraph/graph/codes"
)

// manifestFormat is the format field of Apollo's manifest.
const manifestFormat = "apollo-persisted-query-manifest"

// Manifest maps the id of each trusted operation (the hex sha256 of its
// body) to the operation.
type Manifest map[string]Operation

// Operation is one entry of the manifest. Its body defines exactly one
// operation, of Name and Type (Load checks it), and the fragments it uses:
// a client sending the id can run that operation and nothing else.
type Operation struct {
	Name string // "" for an anonymous operation
	Type ast.Operation
	Body string
}

// Load reads an Apollo persisted query manifest:
//
//	{"format": "apollo-persisted-query-manifest", "version": 1,
//	 "operations": [{"id": "<sha256 of body>", "name": "...", "type": "query", "body": "..."}]}
//
// It refuses a manifest whose ids are not the sha256 of their bodies (a
// client would send an id gqlgen's persisted-query check refuses), and one
// whose body does not parse or defines anything but the one operation its
// entry names, of its type: with a second operation in the body, a client
// could pick it by operationName and run what the manifest does not list.
func Load(path string) (Manifest, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("trusted documents: %w", err)
	}
	var file struct {
		Format     string `json:"format"`
		Version    int    `json:"version"`
		Operations []struct {
			ID   string `json:"id"`
			Name string `json:"name"`
			Type string `json:"type"`
			Body string `json:"body"`
		} `json:"operations"`
	}
	if err := json.Unmarshal(b, &file); err != nil {
		return nil, fmt.Errorf("trusted documents %s: %w", path, err)
	}
	if file.Format != manifestFormat || file.Version != 1 {
		return nil, fmt.Errorf("trusted documents %s: format %q version %d, want %q version 1", path, file.Format, file.Version, manifestFormat)
	}
	m := Manifest{}
	for i, op := range file.Operations {
		if op.ID != ID(op.Body) {
			return nil, fmt.Errorf("trusted documents %s: operation %d (%q): id %q is not the sha256 of its body (%s)", path, i, op.Name, op.ID, ID(op.Body))
		}
		if err := checkBody(op.Name, ast.Operation(op.Type), op.Body); err != nil {
			return nil, fmt.Errorf("trusted documents %s: operation %d (%q): %w", path, i, op.Name, err)
		}
		m[op.ID] = Operation{Name: op.Name, Type: ast.Operation(op.Type), Body: op.Body}
	}
	return m, nil
}

// checkBody checks that body defines exactly one operation, named name,
// of type typ.
func checkBody(name string, typ ast.Operation, body string) error {
	switch typ {
	case ast.Query, ast.Mutation, ast.Subscription:
	default:
		return fmt.Errorf("type %q: want query, mutation or subscription", typ)
	}
	doc, err := parser.ParseQuery(&ast.Source{Input: body})
	if err != nil {
		return fmt.Errorf("body does not parse: %w", err)
	}
	if n := len(doc.Operations); n != 1 {
		return fmt.Errorf("body defines %d operations; a trusted document must define exactly the one its entry names", n)
	}
	op := doc.Operations[0]
	if op.Name != name || op.Operation != typ {
		return fmt.Errorf("body defines %s %q, but the entry names %s %q", op.Operation, op.Name, typ, name)
	}
	return nil
}

// ID is the id of a document's body: its sha256 in hex.
func ID(body string) string {
	sum := sha256.Sum256([]byte(body))
	return hex.EncodeToString(sum[:])
}

// Extension fills in a trusted operation's body from its id (sent as an
// automatic persisted query's sha256Hash), and with Only refuses what the
// manifest lacks, unless the caller holds the admin scope. Use it before
// gqlgen's AutomaticPersistedQuery.
type Extension struct {
	Manifest Manifest
	Only     bool
}

var _ interface {
	graphql.HandlerExtension
	graphql.OperationParameterMutator
} = Extension{}

// ExtensionName implements graphql.HandlerExtension.
func (Extension) ExtensionName() string { return "TrustedDocuments" }

// Validate implements graphql.HandlerExtension.
func (Extension) Validate(graphql.ExecutableSchema) error { return nil }

// MutateOperationParameters implements graphql.OperationParameterMutator.
func (e Extension) MutateOperationParameters(ctx context.Context, raw *graphql.RawParams) *gqlerror.Error {
	id := persistedID(raw.Extensions)
	if raw.Query == "" && id != "" {
		if op, ok := e.Manifest[id]; ok {
			// The body holds this operation alone (Load): another name
			// can only fail, and says so in words of the manifest.
			if raw.OperationName != "" && raw.OperationName != op.Name {
				return &gqlerror.Error{
					Message:    "operationName names no operation of this trusted document",
					Extensions: map[string]any{"code": codes.ValidationFailed},
				}
			}
			raw.Query = op.Body
			return nil
		}
	}
	// An admin's token may send any document; authentication being off
	// (everyone admin, no subject) does not.
	if p := auth.From(ctx); !e.Only || p.Admin && p.Subject != "" {
		return nil
	}
	switch {
	case raw.Query != "":
		if _, ok := e.Manifest[ID(raw.Query)]; ok {
			return nil
		}
	case id == "":
		return nil // no document at all: gqlgen says so
	}
	return &gqlerror.Error{
		Message:    "only trusted documents run here: this operation is not in the trusted documents manifest",
		Extensions: map[string]any{"code": codes.PersistedQueryNotInList},
	}
}

// persistedID is extensions.persistedQuery.sha256Hash, or "".
func persistedID(ext map[string]any) string {
	pq, _ := ext["persistedQuery"].(map[string]any)
	id, _ := pq["sha256Hash"].(string)
	return id
}
