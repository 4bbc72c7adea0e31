package tests

import (
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"testing"
	"unicode"
)

// Typed helpers over the mutations, for setting up data. Each fails the
// test on any error.

type nodeOut struct {
	ID         string          `json:"id"`
	Properties json.RawMessage `json:"properties"`
	CreatedAt  string          `json:"createdAt"`
	UpdatedAt  string          `json:"updatedAt"`
}

type idOut struct {
	ID string `json:"id"`
}

type relOut struct {
	ID         string          `json:"id"`
	Type       string          `json:"type"`
	StartNode  idOut           `json:"startNode"`
	EndNode    idOut           `json:"endNode"`
	Properties json.RawMessage `json:"properties"`
	CreatedAt  string          `json:"createdAt"`
	UpdatedAt  string          `json:"updatedAt"`
}

type articleOut struct {
	ID        string `json:"id"`
	Author    idOut  `json:"author"`
	Title     string `json:"title"`
	Body      string `json:"body"`
	Category  string `json:"category"`
	PostedAt  string `json:"postedAt"`
	UpdatedAt string `json:"updatedAt"`
}

const (
	nodeFields    = `id properties createdAt updatedAt`
	relFields     = `id type startNode { id } endNode { id } properties createdAt updatedAt`
	articleFields = `id author { id } title body category postedAt updatedAt`
)

func (s *server) createNode(t testing.TB, id string, props map[string]any) nodeOut {
	t.Helper()
	var out struct{ CreateNode nodeOut }
	s.mustDo(t, `mutation($id: ID!, $p: JSON) { createNode(id: $id, properties: $p) { `+nodeFields+` } }`,
		map[string]any{"id": id, "p": props}, &out)
	return out.CreateNode
}

func (s *server) createRel(t testing.TB, start, typ, end string, props map[string]any) relOut {
	t.Helper()
	var out struct{ CreateRelationship relOut }
	s.mustDo(t, `mutation($s: ID!, $t: String!, $e: ID!, $p: JSON) {
		createRelationship(startNodeId: $s, type: $t, endNodeId: $e, properties: $p) { `+relFields+` } }`,
		map[string]any{"s": start, "t": typ, "e": end, "p": props}, &out)
	return out.CreateRelationship
}

func (s *server) postArticle(t testing.TB, author, title, body, category string) articleOut {
	t.Helper()
	var out struct{ PostArticle articleOut }
	s.mustDo(t, `mutation($a: ID!, $t: String!, $b: String!, $c: String!) {
		postArticle(authorId: $a, title: $t, body: $b, category: $c) { `+articleFields+` } }`,
		map[string]any{"a": author, "t": title, "b": body, "c": category}, &out)
	return out.PostArticle
}

// bulk runs one mutation made of fields (each "name(args) { selection }"),
// aliased f0, f1, ... in order, and returns each field's data. Mutation
// fields run one after another, so this is a quick way to write a lot.
func (s *server) bulk(t testing.TB, fields []string) []json.RawMessage {
	t.Helper()
	out := make([]json.RawMessage, 0, len(fields))
	const chunk = 100
	for lo := 0; lo < len(fields); lo += chunk {
		part := fields[lo:min(lo+chunk, len(fields))]
		var b strings.Builder
		b.WriteString("mutation {\n")
		for i, f := range part {
			fmt.Fprintf(&b, "f%d: %s\n", i, f)
		}
		b.WriteString("}")
		var data map[string]json.RawMessage
		s.mustDo(t, b.String(), nil, &data)
		for i := range part {
			out = append(out, data[fmt.Sprintf("f%d", i)])
		}
	}
	return out
}

// lit is s as a GraphQL string literal (JSON's escapes are GraphQL's).
func lit(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

func decode[T any](t testing.TB, raw json.RawMessage) T {
	t.Helper()
	var v T
	if err := json.Unmarshal(raw, &v); err != nil {
		t.Fatalf("decoding %s: %v", raw, err)
	}
	return v
}

// jsonEqual reports whether two JSON texts hold equal values.
func jsonEqual(t testing.TB, a, b []byte) bool {
	t.Helper()
	var va, vb any
	if err := json.Unmarshal(a, &va); err != nil {
		t.Fatalf("decoding %s: %v", a, err)
	}
	if err := json.Unmarshal(b, &vb); err != nil {
		t.Fatalf("decoding %s: %v", b, err)
	}
	return reflect.DeepEqual(va, vb)
}

// mustJSON marshals v.
func mustJSON(t testing.TB, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// wordCount is one WordCount.
type wordCount struct {
	Word  string `json:"word"`
	Count int    `json:"count"`
}

// topWords is the documented word count of texts: a word is a maximal run
// of Unicode letters and digits, lower-cased; most frequent first, ties in
// byte order; n at most.
func topWords(texts []string, n int) []wordCount {
	counts := map[string]int{}
	for _, text := range texts {
		for _, w := range strings.FieldsFunc(text, func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) }) {
			counts[strings.ToLower(w)]++
		}
	}
	out := make([]wordCount, 0, len(counts))
	for w, c := range counts {
		out = append(out, wordCount{w, c})
	}
	slices.SortFunc(out, func(a, b wordCount) int {
		if a.Count != b.Count {
			return b.Count - a.Count
		}
		return strings.Compare(a.Word, b.Word)
	})
	if len(out) > n {
		out = out[:n]
	}
	return out
}

// Article ids are opaque to clients, but the tests forge some: base64url
// (no padding) of 0x01, uvarint(len(author)), author, uvarint(posted ms),
// uvarint(seq) (store/keys/article.go).
type articleID struct {
	version      byte
	author       string
	posted, seq  uint64
	trailing     []byte
	authorLenAdd uint64 // added to the encoded author length
}

func parseArticleID(t testing.TB, id string) articleID {
	t.Helper()
	b, err := base64.RawURLEncoding.DecodeString(id)
	if err != nil || len(b) < 1 {
		t.Fatalf("article id %q: %v", id, err)
	}
	a := articleID{version: b[0]}
	b = b[1:]
	n, k := binary.Uvarint(b)
	if k <= 0 || uint64(len(b)-k) < n {
		t.Fatalf("article id %q: bad author length", id)
	}
	a.author, b = string(b[k:k+int(n)]), b[k+int(n):]
	if a.posted, k = binary.Uvarint(b); k <= 0 {
		t.Fatalf("article id %q: bad posted time", id)
	}
	b = b[k:]
	if a.seq, k = binary.Uvarint(b); k <= 0 || k != len(b) {
		t.Fatalf("article id %q: bad sequence number", id)
	}
	return a
}

func (a articleID) String() string {
	b := []byte{a.version}
	b = binary.AppendUvarint(b, uint64(len(a.author))+a.authorLenAdd)
	b = append(b, a.author...)
	b = binary.AppendUvarint(b, a.posted)
	b = binary.AppendUvarint(b, a.seq)
	b = append(b, a.trailing...)
	return base64.RawURLEncoding.EncodeToString(b)
}

// withSeq is id with another sequence number: well-formed, but no article's.
func withSeq(t testing.TB, id string, seq uint64) string {
	t.Helper()
	a := parseArticleID(t, id)
	a.seq = seq
	return a.String()
}
