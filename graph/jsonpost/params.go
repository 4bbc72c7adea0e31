package jsonpost

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"unicode/utf8"

	"github.com/99designs/gqlgen/graphql"
)

// maxOperationName bounds the operationName parameter: a name is logged
// (cut shorter there) and looked up, never echoed, and no document names
// its operations at this length.
const maxOperationName = 1024

// errBatch refuses a JSON array body: one request carries one operation.
var errBatch = errors.New("batched operations (a JSON array body) are not supported: send one operation per request, as a JSON object")

// request is a POST body's parameters, decoded in one pass. A parameter
// of the wrong type is reported by its name (json.UnmarshalTypeError's
// Field), never by a Go type.
type request struct {
	Query         string         `json:"query"`
	OperationName string         `json:"operationName"`
	Variables     map[string]any `json:"variables"`
	Extensions    map[string]any `json:"extensions"`
}

// typeErrors are the messages for a parameter of the wrong type.
var typeErrors = map[string]string{
	"query":         "query must be a string",
	"operationName": "operationName must be a string",
	"variables":     "variables must be a JSON object",
	"extensions":    "extensions must be a JSON object",
}

// decodeBody turns a POST body into the request's parameters. Its errors
// name the parameter at fault and never quote the body.
func decodeBody(body []byte) (*graphql.RawParams, error) {
	first := firstByte(body)
	switch first {
	case 0:
		return nil, errors.New("the request body is empty: want a JSON object with a query")
	case '[':
		return nil, errBatch
	case '{':
	default:
		return nil, errors.New("the request body must be a JSON object with a query")
	}
	if err := checkText(body); err != nil {
		return nil, fmt.Errorf("the request body %w", err)
	}
	if p, ok := decodeFast(body); ok {
		return p, checkParams(p)
	}
	var req request
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber() // numbers stay json.Number, as gqlgen's transports keep them
	err := dec.Decode(&req)
	if err == nil && firstByte(body[dec.InputOffset():]) != 0 {
		err = errors.New("the request body is not valid JSON: more follows its object")
	}
	if err != nil {
		return nil, decodeError(err)
	}
	p := &graphql.RawParams{Query: req.Query, OperationName: req.OperationName, Variables: req.Variables, Extensions: req.Extensions}
	return p, checkParams(p)
}

// decodeError words err from decoding a body without quoting it or
// naming a Go type.
func decodeError(err error) error {
	var syntax *json.SyntaxError
	var typ *json.UnmarshalTypeError
	switch {
	case errors.As(err, &syntax):
		return fmt.Errorf("the request body is not valid JSON: %s (at byte %d)", syntax.Error(), syntax.Offset)
	case errors.Is(err, io.ErrUnexpectedEOF):
		return errors.New("the request body is not valid JSON: it ends early")
	case errors.As(err, &typ):
		param, _, _ := strings.Cut(typ.Field, ".")
		if msg, ok := typeErrors[param]; ok {
			return errors.New(msg)
		}
		return errors.New("the request body must be a JSON object with a query")
	case strings.HasPrefix(err.Error(), "the request body"):
		return err
	}
	return errors.New("the request body is not valid JSON")
}

// decodeQueryString is decodeBody for a GET request's URL parameters.
func decodeQueryString(get func(string) string) (*graphql.RawParams, error) {
	p := &graphql.RawParams{Query: get("query"), OperationName: get("operationName")}
	for _, name := range []string{"query", "operationName", "variables", "extensions"} {
		if err := checkText([]byte(get(name))); err != nil {
			return nil, fmt.Errorf("%s %w", name, err)
		}
	}
	var err error
	if p.Variables, err = objectParam("variables", json.RawMessage(get("variables"))); err != nil {
		return nil, err
	}
	if p.Extensions, err = objectParam("extensions", json.RawMessage(get("extensions"))); err != nil {
		return nil, err
	}
	return p, checkParams(p)
}

// checkParams checks what both methods require of the parameters once
// their types are right.
func checkParams(p *graphql.RawParams) error {
	if p.Query == "" {
		// A persisted query's hash stands for its document.
		if _, apq := p.Extensions["persistedQuery"]; !apq {
			return errors.New("query is missing: want a GraphQL document in the query parameter")
		}
	}
	// gqlparser writes each \u escape of a string literal as one rune:
	// a surrogate, even one of a pair, would become U+FFFD.
	// Looked for only in a query with a \u (the look copies the query).
	if strings.Contains(p.Query, `\u`) {
		if i := surrogateEscape([]byte(p.Query)); i >= 0 {
			return fmt.Errorf("query has a \\u escape of a UTF-16 surrogate at byte %d, which the GraphQL parser would turn into U+FFFD: write the character itself, or pass it in a variable", i)
		}
	}
	if n := len(p.OperationName); n > maxOperationName {
		return fmt.Errorf("operationName is %d bytes long; at most %d", n, maxOperationName)
	}
	return nil
}

// objectParam decodes a parameter that must be a JSON object (or absent,
// or null). Numbers stay json.Number, as gqlgen's transports keep them.
func objectParam(name string, raw json.RawMessage) (map[string]any, error) {
	switch firstByte(raw) {
	case 0, 'n':
		if isNull(raw) {
			return nil, nil
		}
	case '{':
		var m map[string]any
		dec := json.NewDecoder(bytes.NewReader(raw))
		dec.UseNumber()
		if json.Valid(raw) && dec.Decode(&m) == nil {
			return m, nil
		}
	}
	return nil, fmt.Errorf("%s must be a JSON object", name)
}

func isNull(raw json.RawMessage) bool {
	t := bytes.TrimSpace(raw)
	return len(t) == 0 || string(t) == "null"
}

// firstByte is b's first byte after JSON white space, 0 if none.
func firstByte(b []byte) byte {
	for _, c := range b {
		switch c {
		case ' ', '\t', '\n', '\r':
			continue
		}
		return c
	}
	return 0
}

// checkText refuses text that encoding/json (or gqlparser) would silently
// rewrite to U+FFFD: bytes that are not UTF-8, and \u escapes of a UTF-16
// surrogate without its other half. Two different byte strings must never
// become the same id or property.
func checkText(b []byte) error {
	if !utf8.Valid(b) {
		return errors.New("is not valid UTF-8")
	}
	if i := loneSurrogate(b); i >= 0 {
		return fmt.Errorf("has a \\u escape of a lone UTF-16 surrogate at byte %d", i)
	}
	return nil
}

// loneSurrogate returns the offset of the first \uXXXX escape in b that
// is a high surrogate not followed by a low one, or a low surrogate not
// preceded by a high one; -1 if there is none. It looks at every
// backslash: in JSON (and in GraphQL string literals) an escape is a
// backslash and its next character, so an escaped backslash is skipped
// whole.
func loneSurrogate(b []byte) int {
	for i := 0; ; {
		j := bytes.IndexByte(b[i:], '\\')
		if j < 0 {
			return -1
		}
		i += j
		v, ok := hexEscape(b, i)
		if !ok {
			i += 2 // \\, \" or the like: the next character is not an escape
			if i >= len(b) {
				return -1 // a backslash last: no escape, and nothing after it
			}
			continue
		}
		switch {
		case v >= 0xD800 && v < 0xDC00:
			if w, ok := hexEscape(b, i+6); ok && w >= 0xDC00 && w <= 0xDFFF {
				i += 12
				continue
			}
			return i
		case v >= 0xDC00 && v <= 0xDFFF:
			return i
		}
		i += 6
	}
}

// surrogateEscape returns the offset of the first \uXXXX escape in b of a
// UTF-16 surrogate, paired or not; -1 if there is none.
func surrogateEscape(b []byte) int {
	for i := 0; ; {
		j := bytes.IndexByte(b[i:], '\\')
		if j < 0 {
			return -1
		}
		i += j
		if v, ok := hexEscape(b, i); ok && v >= 0xD800 && v <= 0xDFFF {
			return i
		}
		if i += 2; i >= len(b) {
			return -1
		}
	}
}

// hexEscape decodes the escape \uXXXX at b[i:], if there is one.
func hexEscape(b []byte, i int) (rune, bool) {
	if i+6 > len(b) || b[i] != '\\' || b[i+1] != 'u' {
		return 0, false
	}
	var v rune
	for _, c := range b[i+2 : i+6] {
		switch {
		case c >= '0' && c <= '9':
			v = v<<4 | rune(c-'0')
		case c >= 'a' && c <= 'f':
			v = v<<4 | rune(c-'a'+10)
		case c >= 'A' && c <= 'F':
			v = v<<4 | rune(c-'A'+10)
		default:
			return 0, false
		}
	}
	return v, true
}
