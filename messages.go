package main

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/99designs/gqlgen/graphql"
	"github.com/vektah/gqlparser/v2/ast"
	"github.com/vektah/gqlparser/v2/gqlerror"

	"github.com/hbgraph/hbgraph/auth"
	"github.com/hbgraph/hbgraph/graph/codes"
	"github.com/hbgraph/hbgraph/store"
)

// An error's message is in our words. What the client sent (an id, an
// operation name, a string, a property name) is not echoed, and neither
// is a Go type, a row key or a library's chain of errors: a resolver's
// error reaches the client only as a store.Refusal's Reason or, failing
// that, a fixed sentence for its code; a library's message about the
// request is reworded where it quotes the client and, like every message,
// bounded and stripped of control and bidirectional characters.

// maxMessage bounds a message: a validation error may name the
// document's own fields and types, which the lexer keeps to GraphQL names
// but not to a length.
const maxMessage = 512

// clientMessage is the message the client gets for err, given the code
// chosen for it, what gqlgen made of it (gerr) and the mutation it met,
// if any (mutationOf).
func clientMessage(err error, gerr *gqlerror.Error, code, mutation string) string {
	var refusal *store.Refusal
	if errors.As(err, &refusal) {
		return sanitize(refusal.Reason)
	}
	for e := err; e != nil; e = errors.Unwrap(e) {
		if direct, ok := e.(*gqlerror.Error); ok && direct.Err == nil {
			// gqlgen's, gqlparser's or one of our extensions' own
			// error about the request.
			return sanitize(requestMessage(direct.Message, gerr.Path))
		}
	}
	if len(gerr.Path) == 1 && gerr.Path[0] == ast.PathName("_entities") {
		return "a representation names a type this subgraph does not resolve, or lacks its id"
	}
	field := mutation
	switch code {
	case codes.NotFound:
		if msg, ok := notFound[field]; ok {
			return msg
		}
		return "what it names does not exist"
	case codes.AlreadyExists:
		if msg, ok := alreadyExists[field]; ok {
			return msg
		}
		return "it already exists"
	case codes.Conflict:
		if field == "deleteNode" {
			return "the node still has relationships: delete it with detach: true"
		}
		return "it conflicts with the stored data"
	case codes.Unavailable:
		return "the store did not answer in time: try again"
	case codes.Unauthenticated:
		return auth.ErrUnauthenticated.Error()
	case codes.Forbidden:
		return "only the node's owner or an admin may change it"
	}
	return "invalid input"
}

// notFound and alreadyExists word NOT_FOUND and ALREADY_EXISTS by the
// mutation that met them.
var (
	notFound = map[string]string{
		"updateNodeProperties":         "the node does not exist",
		"deleteNode":                   "the node does not exist",
		"createRelationship":           "a node it names does not exist",
		"updateRelationshipProperties": "the relationship does not exist",
		"deleteRelationship":           "the relationship does not exist",
		"postArticle":                  "the author node does not exist",
		"updateArticle":                "the article does not exist",
		"deleteArticle":                "the article does not exist",
	}
	alreadyExists = map[string]string{
		"createNode":         "a node with this id already exists",
		"createRelationship": "the relationship already exists",
	}
)

// mutationOf is the name of the mutation field (not its alias) whose
// resolver ctx belongs to, or "".
func mutationOf(ctx context.Context) string {
	for fc := graphql.GetFieldContext(ctx); fc != nil; fc = fc.Parent {
		if fc.Object == "Mutation" && fc.Field.Field != nil {
			return fc.Field.Name
		}
	}
	return ""
}

// requestMessage rewords the library messages that quote the client.
func requestMessage(msg string, path ast.Path) string {
	switch {
	case strings.HasPrefix(msg, "operation ") && strings.HasSuffix(msg, " not found"):
		// gqlgen's "operation <operationName> not found", up to 1 KiB
		// of the client's bytes.
		return "operationName names no operation in the document"
	case len(path) >= 2 && path[0] == ast.PathName("variable"):
		return variableMessage(msg, path)
	}
	// gqlparser's ValuesOfCorrectType: `Int cannot represent non-integer
	// value: "<literal>"`, `Expected value of type "T", found <literal>.`
	if i := strings.Index(msg, "cannot represent "); i >= 0 {
		if j := strings.Index(msg[i:], "value: "); j >= 0 {
			return msg[:i+j+len("value")]
		}
	}
	if i := strings.Index(msg, `Expected value of type "`); i >= 0 {
		if j := strings.Index(msg[i:], `", found `); j >= 0 {
			return msg[:i+j+1]
		}
	}
	return msg
}

// variableMessage rewords gqlparser's coercion of a variable's value
// ("cannot use float64 as Int", "cannot use value 0 as Int" for 1.5,
// "<the client's string> is not a valid Direction"). The variable's name
// comes from the document's definitions, a GraphQL name.
func variableMessage(msg string, path ast.Path) string {
	name, _ := path[1].(ast.PathName)
	where := fmt.Sprintf("variable $%s", name)
	if len(path) > 2 {
		where += " (an element of the list)"
	}
	switch {
	case msg == "must be defined":
		return where + " is required and was not given"
	case msg == "cannot be null":
		return where + " must not be null"
	case strings.HasPrefix(msg, "cannot use "):
		if i := strings.LastIndex(msg, " as "); i >= 0 && validName(msg[i+4:]) {
			return fmt.Sprintf("%s is not a valid %s", where, msg[i+4:])
		}
	case msg == "enums must be ints or strings":
		return where + " is not a valid enum value"
	}
	const notValid = " is not a valid "
	if i := strings.LastIndex(msg, notValid); i >= 0 && validName(msg[i+len(notValid):]) {
		return fmt.Sprintf("%s is not a valid %s value", where, msg[i+len(notValid):])
	}
	return where + " does not coerce to its type"
}

// validName reports whether s is a GraphQL name (a schema's type name).
func validName(s string) bool {
	for i, r := range s {
		if !(r == '_' || 'a' <= r && r <= 'z' || 'A' <= r && r <= 'Z' || i > 0 && '0' <= r && r <= '9') {
			return false
		}
	}
	return s != ""
}

// sanitize escapes control, format and bidirectional characters (a
// newline, an ANSI escape, U+202E) and bounds msg to maxMessage bytes: a
// message may reach a terminal or a log viewer.
func sanitize(msg string) string {
	clean := true
	for _, r := range msg {
		if unsafeRune(r) {
			clean = false
			break
		}
	}
	if clean && len(msg) <= maxMessage {
		return msg
	}
	var b strings.Builder
	for _, r := range msg {
		if b.Len() >= maxMessage {
			b.WriteString("…")
			break
		}
		if unsafeRune(r) {
			fmt.Fprintf(&b, `\u%04x`, r)
			continue
		}
		b.WriteRune(r)
	}
	return b.String()
}

func unsafeRune(r rune) bool {
	return r == utf8.RuneError || unicode.IsControl(r) || unicode.Is(unicode.Cf, r) || unicode.Is(unicode.Bidi_Control, r)
}
