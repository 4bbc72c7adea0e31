package subgraphsdl

import "testing"

func TestWithoutAuthDirectives(t *testing.T) {
	in := `extend schema @link(url: "https://specs.apollo.dev/federation/v2.5", import: ["@key", "@shareable", "@authenticated", "@requiresScopes"])
type Node @key(fields: "id") {
  owner: String @authenticated
  secret: String @requiresScopes(scopes: [["a:b"]]) @deprecated
}`
	want := `extend schema @link(url: "https://specs.apollo.dev/federation/v2.5", import: ["@key", "@shareable"])
type Node @key(fields: "id") {
  owner: String
  secret: String @deprecated
}`
	if got := WithoutAuthDirectives(in); got != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
}
