package jsonpost

import (
	"bytes"
	"encoding/json"
	"strings"

	"github.com/99designs/gqlgen/graphql"
)

// decodeFast decodes the bodies clients send, and only those, without
// encoding/json's reflection over the whole body (8% of a { __typename }
// request's CPU in the gateway, BenchmarkGatewayFloor): one JSON object
// whose keys are query, operationName, variables and extensions, each at
// most once and spelt exactly so, the first two strings, the last two
// objects or null. It returns false for anything else, and decodeBody
// decodes that as before, with the same errors; where it returns true,
// its parameters are those decodeBody's encoding/json path makes
// (FuzzDecodeFast checks the two against each other). body has passed
// checkText: it is UTF-8 with no lone surrogate escape.
func decodeFast(body []byte) (*graphql.RawParams, bool) {
	p := &graphql.RawParams{}
	d := fastDecoder{b: body}
	if !d.byte('{') {
		return nil, false
	}
	var seen [4]bool
	for first := true; ; first = false {
		d.space()
		if d.peek() == '}' && first {
			d.i++
			break
		}
		key, ok := d.plainString()
		if !ok || !d.byte(':') {
			return nil, false
		}
		d.space()
		switch key {
		case "query":
			if seen[0] {
				return nil, false
			}
			seen[0] = true
			if p.Query, ok = d.string(); !ok {
				return nil, false
			}
		case "operationName":
			if seen[1] {
				return nil, false
			}
			seen[1] = true
			if p.OperationName, ok = d.string(); !ok {
				return nil, false
			}
		case "variables":
			if seen[2] {
				return nil, false
			}
			seen[2] = true
			if p.Variables, ok = d.object(); !ok {
				return nil, false
			}
		case "extensions":
			if seen[3] {
				return nil, false
			}
			seen[3] = true
			if p.Extensions, ok = d.object(); !ok {
				return nil, false
			}
		default:
			return nil, false
		}
		d.space()
		if d.peek() == ',' {
			d.i++
			continue
		}
		if !d.byte('}') {
			return nil, false
		}
		break
	}
	d.space()
	return p, d.i == len(d.b)
}

// fastDecoder reads a body from b[i:].
type fastDecoder struct {
	b []byte
	i int
}

func (d *fastDecoder) peek() byte {
	if d.i < len(d.b) {
		return d.b[d.i]
	}
	return 0
}

func (d *fastDecoder) space() {
	for d.i < len(d.b) {
		switch d.b[d.i] {
		case ' ', '\t', '\n', '\r':
			d.i++
		default:
			return
		}
	}
}

// byte skips white space and c.
func (d *fastDecoder) byte(c byte) bool {
	d.space()
	if d.peek() != c {
		return false
	}
	d.i++
	return true
}

// stringEnd returns the end of the string token at i (after its closing
// quote) and whether it holds a backslash; false if it is not a string
// or holds a control character, which JSON does not allow.
func (d *fastDecoder) stringEnd() (end int, escaped, ok bool) {
	if d.peek() != '"' {
		return 0, false, false
	}
	for j := d.i + 1; j < len(d.b); j++ {
		switch c := d.b[j]; {
		case c == '"':
			return j + 1, escaped, true
		case c == '\\':
			escaped = true
			j++ // the escaped character, whatever it is, is not the end
		case c < 0x20:
			return 0, false, false
		}
	}
	return 0, false, false
}

// plainString reads a string with no escape (a key).
func (d *fastDecoder) plainString() (string, bool) {
	end, escaped, ok := d.stringEnd()
	if !ok || escaped {
		return "", false
	}
	s := string(d.b[d.i+1 : end-1])
	d.i = end
	return s, true
}

// string reads a string value; one with escapes is unquoted by
// encoding/json, the token alone.
func (d *fastDecoder) string() (string, bool) {
	end, escaped, ok := d.stringEnd()
	if !ok {
		return "", false
	}
	tok := d.b[d.i:end]
	d.i = end
	if !escaped {
		return string(tok[1 : len(tok)-1]), true
	}
	if s, ok := unescape(tok[1 : len(tok)-1]); ok {
		return s, true
	}
	var s string
	if json.Unmarshal(tok, &s) != nil {
		return "", false
	}
	return s, true
}

// unescape undoes JSON's one-character escapes (a query's new lines and
// quotes); false for a \u escape or one JSON does not have.
func unescape(b []byte) (string, bool) {
	var out strings.Builder
	out.Grow(len(b))
	for i := 0; i < len(b); i++ {
		c := b[i]
		if c != '\\' {
			out.WriteByte(c)
			continue
		}
		if i++; i == len(b) {
			return "", false
		}
		switch b[i] {
		case '"', '\\', '/':
			out.WriteByte(b[i])
		case 'n':
			out.WriteByte('\n')
		case 't':
			out.WriteByte('\t')
		case 'r':
			out.WriteByte('\r')
		case 'b':
			out.WriteByte('\b')
		case 'f':
			out.WriteByte('\f')
		default:
			return "", false
		}
	}
	return out.String(), true
}

// object reads an object, or null (nil). An object of string values
// without escapes is read here; any other is decoded by encoding/json,
// numbers kept as json.Number.
func (d *fastDecoder) object() (map[string]any, bool) {
	if bytes.HasPrefix(d.b[d.i:], []byte("null")) {
		d.i += len("null")
		return nil, true
	}
	if d.peek() != '{' {
		return nil, false
	}
	start := d.i
	if m, ok := d.flatObject(); ok {
		return m, true
	}
	d.i = start
	end, ok := d.valueEnd()
	if !ok {
		return nil, false
	}
	var m map[string]any
	dec := json.NewDecoder(bytes.NewReader(d.b[start:end]))
	dec.UseNumber()
	if dec.Decode(&m) != nil || m == nil {
		return nil, false
	}
	d.i = end
	return m, true
}

// flatObject reads {"k": "v", ...} with plain keys and values, each key
// once.
func (d *fastDecoder) flatObject() (map[string]any, bool) {
	d.i++ // {
	m := map[string]any{}
	d.space()
	if d.peek() == '}' {
		d.i++
		return m, true
	}
	for {
		d.space()
		k, ok := d.plainString()
		if !ok || !d.byte(':') {
			return nil, false
		}
		d.space()
		end, escaped, ok := d.stringEnd()
		if !ok || escaped {
			return nil, false
		}
		if _, dup := m[k]; dup {
			return nil, false
		}
		m[k] = string(d.b[d.i+1 : end-1])
		d.i = end
		d.space()
		switch d.peek() {
		case ',':
			d.i++
		case '}':
			d.i++
			return m, true
		default:
			return nil, false
		}
	}
}

// valueEnd returns the end of the object or array at i, by nesting and
// strings alone (encoding/json checks the rest).
func (d *fastDecoder) valueEnd() (int, bool) {
	depth := 0
	for j := d.i; j < len(d.b); j++ {
		switch d.b[j] {
		case '"':
			d.i = j
			end, _, ok := d.stringEnd()
			if !ok {
				return 0, false
			}
			j = end - 1
		case '{', '[':
			depth++
		case '}', ']':
			depth--
			if depth == 0 {
				return j + 1, true
			}
		}
	}
	return 0, false
}
