package graphiql

import (
	"bufio"
	"crypto/sha256"
	"crypto/sha512"
	"encoding/base64"
	"encoding/hex"
	"encoding/xml"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/vektah/gqlparser/v2"
	"github.com/vektah/gqlparser/v2/ast"

	"github.com/hbgraph/hbgraph/graph/generated"
)

func get(t *testing.T, h http.Handler, target string, hdr ...string) (*http.Response, []byte) {
	t.Helper()
	req := httptest.NewRequest(http.MethodGet, target, nil)
	for i := 0; i+1 < len(hdr); i += 2 {
		req.Header.Set(hdr[i], hdr[i+1])
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	res := rec.Result()
	body, err := io.ReadAll(res.Body)
	if err != nil {
		t.Fatal(err)
	}
	return res, body
}

// pageRef is a URL the page references, with its integrity attribute.
type pageRef struct {
	tag, attr, url, integrity string
}

// element is a start tag of the page.
type element struct {
	name  string
	attrs map[string]string
}

// elements parses the page (with encoding/xml's lenient HTML mode: the
// standard library has no HTML parser) and returns its start tags.
func elements(t *testing.T, page []byte) []element {
	t.Helper()
	d := xml.NewDecoder(strings.NewReader(string(page)))
	d.Strict, d.AutoClose, d.Entity = false, xml.HTMLAutoClose, xml.HTMLEntity
	var els []element
	for {
		tok, err := d.Token()
		if errors.Is(err, io.EOF) {
			return els
		}
		if err != nil {
			t.Fatalf("parsing the page: %v\n%s", err, page)
		}
		if se, ok := tok.(xml.StartElement); ok {
			e := element{strings.ToLower(se.Name.Local), map[string]string{}}
			for _, a := range se.Attr {
				k := strings.ToLower(a.Name.Local)
				if a.Name.Space != "" {
					k = strings.ToLower(a.Name.Space) + ":" + k
				}
				e.attrs[k] = a.Value
			}
			els = append(els, e)
		}
	}
}

// pageRefs returns every URL-valued attribute (src, href, ...) of the page.
func pageRefs(t *testing.T, page []byte) []pageRef {
	t.Helper()
	var refs []pageRef
	for _, e := range elements(t, page) {
		for k, v := range e.attrs {
			switch k {
			case "src", "href", "action", "formaction", "poster", "data", "srcset", "xlink:href":
				refs = append(refs, pageRef{e.name, k, v, e.attrs["integrity"]})
			}
		}
	}
	if len(refs) == 0 {
		t.Fatalf("no src or href on the page:\n%s", page)
	}
	return refs
}

// TestPageIsSelfContained: every URL on the page is this origin's (or the
// empty data: favicon), every script and stylesheet is served with the
// long cache lifetime, and its integrity attribute is the sha384 of what
// is served.
func TestPageIsSelfContained(t *testing.T) {
	h := Handler("/query")
	res, page := get(t, h, "/")
	if res.StatusCode != http.StatusOK {
		t.Fatalf("GET / = %d", res.StatusCode)
	}
	if ct := res.Header.Get("Content-Type"); ct != "text/html; charset=utf-8" {
		t.Errorf("page Content-Type %q", ct)
	}
	refs := pageRefs(t, page)
	var scripts, styles int
	for _, r := range refs {
		if r.tag == "link" && r.url == "data:," {
			continue // <link rel="icon" href="data:,">: no favicon request
		}
		u, err := url.Parse(r.url)
		if err != nil || u.Scheme != "" || u.Host != "" || !strings.HasPrefix(r.url, AssetsPrefix) {
			t.Errorf("<%s %s=%q>: not a path under %s of this origin", r.tag, r.attr, r.url, AssetsPrefix)
			continue
		}
		switch r.tag {
		case "script":
			scripts++
		case "link":
			styles++
		default:
			t.Errorf("<%s %s=%q>: unexpected", r.tag, r.attr, r.url)
		}
		ares, body := get(t, h, r.url)
		if ares.StatusCode != http.StatusOK {
			t.Errorf("GET %s = %d", r.url, ares.StatusCode)
			continue
		}
		if cc := ares.Header.Get("Cache-Control"); cc != "public, max-age=31536000, immutable" {
			t.Errorf("GET %s: Cache-Control %q", r.url, cc)
		}
		wantCT := map[string]string{"script": "text/javascript; charset=utf-8", "link": "text/css; charset=utf-8"}[r.tag]
		if ct := ares.Header.Get("Content-Type"); ct != wantCT {
			t.Errorf("GET %s: Content-Type %q, want %q", r.url, ct, wantCT)
		}
		if ares.Header.Get("X-Content-Type-Options") != "nosniff" {
			t.Errorf("GET %s: no X-Content-Type-Options: nosniff", r.url)
		}
		sum := sha512.Sum384(body)
		if want := "sha384-" + base64.StdEncoding.EncodeToString(sum[:]); r.integrity != want {
			t.Errorf("<%s %s=%q integrity=%q>: served bytes are %s", r.tag, r.attr, r.url, r.integrity, want)
		}
		etag := ares.Header.Get("ETag")
		if etag == "" {
			t.Errorf("GET %s: no ETag", r.url)
			continue
		}
		if res304, _ := get(t, h, r.url, "If-None-Match", etag); res304.StatusCode != http.StatusNotModified {
			t.Errorf("GET %s If-None-Match %s = %d, want 304", r.url, etag, res304.StatusCode)
		}
	}
	// React, ReactDOM, GraphiQL, the explorer plugin, graphiql-init.js;
	// GraphiQL's, the explorer's and the page's stylesheets.
	if scripts != 5 || styles != 3 {
		t.Errorf("page has %d scripts and %d stylesheets, want 5 and 3:\n%s", scripts, styles, page)
	}
	if regexp.MustCompile(`(?i)<script[^>]*>[^<\s]`).Match(page) {
		t.Errorf("page has an inline script:\n%s", page)
	}
}

// TestPageHeaders: the page's CSP names no host, allows scripts and
// connections from 'self' only, and the other headers are there.
func TestPageHeaders(t *testing.T) {
	res, page := get(t, Handler("/query"), "/")
	csp := res.Header.Get("Content-Security-Policy")
	if csp == "" {
		t.Fatal("no Content-Security-Policy")
	}
	if regexp.MustCompile(`(?i)https?:|wss?:|\*`).MatchString(csp) {
		t.Errorf("CSP names a scheme, host or wildcard: %q", csp)
	}
	dirs := map[string][]string{}
	for _, d := range strings.Split(csp, ";") {
		f := strings.Fields(d)
		if len(f) > 0 {
			dirs[f[0]] = f[1:]
		}
	}
	for _, d := range []string{"default-src", "script-src", "connect-src"} {
		if !slices.Equal(dirs[d], []string{"'self'"}) {
			t.Errorf("CSP %s = %q, want only 'self'", d, dirs[d])
		}
	}
	if !slices.Equal(dirs["frame-ancestors"], []string{"'none'"}) {
		t.Errorf("CSP frame-ancestors = %q", dirs["frame-ancestors"])
	}
	style := dirs["style-src"]
	if len(style) != 2 || style[0] != "'self'" || !strings.HasPrefix(style[1], "'nonce-") || strings.Contains(csp, "unsafe") {
		t.Errorf("CSP style-src = %q, want 'self' and a nonce", style)
	}
	nonce := strings.TrimSuffix(strings.TrimPrefix(style[1], "'nonce-"), "'")
	if !strings.Contains(string(page), `data-style-nonce="`+nonce+`"`) {
		t.Errorf("page does not hand its style nonce %q to graphiql-init.js", nonce)
	}
	if res2, _ := get(t, Handler("/query"), "/"); res2.Header.Get("Content-Security-Policy") == csp {
		t.Error("two pages got the same style nonce")
	}
	for k, want := range map[string]string{
		"X-Content-Type-Options": "nosniff",
		"Referrer-Policy":        "no-referrer",
		"X-Frame-Options":        "DENY",
		"Cache-Control":          "no-cache",
	} {
		if got := res.Header.Get(k); got != want {
			t.Errorf("%s: %q, want %q", k, got, want)
		}
	}
	if !strings.Contains(string(page), `data-endpoint="/query"`) {
		t.Error("page does not point GraphiQL at /query")
	}
}

func TestUnknownPaths(t *testing.T) {
	h := Handler("/query")
	var known string
	for p := range h.(*handler).assets {
		known = p
		break
	}
	for _, p := range []string{
		"/assets/graphiql-4.1.2/nope.js",
		"/assets/graphiql-0.0.0/graphiql.min.js",
		"/assets/",
		"/assets/graphiql-4.1.2/LICENSE",
		"/assets/SHA256SUMS",
		"/assets/../versions.env",
		"/index.html",
		known + "x",
		strings.TrimSuffix(known, "/"+path.Base(known)),
	} {
		if res, _ := get(t, h, p); res.StatusCode != http.StatusNotFound {
			t.Errorf("GET %s = %d, want 404", p, res.StatusCode)
		}
	}
	req := httptest.NewRequest(http.MethodPost, "/", nil)
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	if rec.Code != http.StatusMethodNotAllowed {
		t.Errorf("POST / = %d, want 405", rec.Code)
	}
}

// TestRegister: mounted on a ServeMux beside an endpoint, the page and its
// files answer and other paths stay the mux's.
func TestRegister(t *testing.T) {
	mux := http.NewServeMux()
	mux.Handle("/query", http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { io.WriteString(w, "gql") }))
	Register(mux, "/query")
	srv := httptest.NewServer(mux)
	defer srv.Close()
	status := func(method, p string) int {
		req, _ := http.NewRequest(method, srv.URL+p, nil)
		res, err := srv.Client().Do(req)
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		return res.StatusCode
	}
	js := AssetsPrefix + "graphiql-" + versions.GraphiQL + "/graphiql.min.js"
	for _, c := range []struct {
		method, path string
		want         int
	}{
		{"GET", "/", 200}, {"HEAD", "/", 200}, {"GET", js, 200}, {"HEAD", js, 200},
		{"GET", "/query", 200}, {"GET", "/nope", 404}, {"GET", "/assets/nope", 404},
		{"POST", js, 405},
	} {
		if got := status(c.method, c.path); got != c.want {
			t.Errorf("%s %s = %d, want %d", c.method, c.path, got, c.want)
		}
	}
}

func TestEndpointMustBeSameOrigin(t *testing.T) {
	for _, ep := range []string{"https://example.com/query", "//example.com/query", "query", ""} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("Handler(%q) did not panic", ep)
				}
			}()
			Handler(ep)
		}()
	}
}

// TestVendoredAssetsMatchSums: the embedded files are the ones
// scripts/vendor-graphiql.sh fetched (graphiql/assets/SHA256SUMS), and the
// versioned directories are those of versions.env.
func TestVendoredAssetsMatchSums(t *testing.T) {
	f, err := os.Open("assets/SHA256SUMS")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	listed := map[string]bool{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		sum, name, ok := strings.Cut(sc.Text(), "  ")
		if !ok {
			t.Fatalf("SHA256SUMS: bad line %q", sc.Text())
		}
		listed[name] = true
		b, err := files.ReadFile("assets/" + name)
		if err != nil {
			t.Errorf("SHA256SUMS lists %s: %v", name, err)
			continue
		}
		if got := sha256.Sum256(b); hex.EncodeToString(got[:]) != sum {
			t.Errorf("assets/%s: sha256 %x, SHA256SUMS says %s", name, got, sum)
		}
	}
	for p := range Handler("/query").(*handler).assets {
		rel := strings.TrimPrefix(p, AssetsPrefix)
		if !strings.HasPrefix(rel, "hbgraph-") && !listed[rel] {
			t.Errorf("served %s is not in SHA256SUMS", p)
		}
	}
	v := VendoredVersions()
	for _, dir := range []string{"graphiql-" + v.GraphiQL, "react-" + v.React, "react-dom-" + v.ReactDOM, "plugin-explorer-" + v.PluginExplorer} {
		found := false
		for name := range listed {
			found = found || strings.HasPrefix(name, dir+"/")
		}
		if !found {
			t.Errorf("SHA256SUMS has nothing in %s/", dir)
		}
	}
}

// TestExampleQueryValidates: the query the page opens on is valid against
// hbgraph's schema, with the variables it comes with.
func TestExampleQueryValidates(t *testing.T) {
	schema := generated.NewExecutableSchema(generated.Config{}).Schema()
	q := string(mustRead("example.graphql"))
	doc, errs := gqlparser.LoadQueryWithRules(schema, q, nil) // nil: the default rules
	if errs != nil {
		t.Fatalf("example.graphql: %v", errs)
	}
	if len(doc.Operations) != 1 || doc.Operations[0].Operation != ast.Query {
		t.Fatalf("example.graphql: want one query operation")
	}
	var vars []string
	for _, v := range doc.Operations[0].VariableDefinitions {
		if v.DefaultValue == nil {
			vars = append(vars, v.Variable)
		}
	}
	if !slices.Equal(vars, []string{"id"}) || !strings.Contains(exampleVariables, `"id"`) {
		t.Errorf("example's required variables %v; exampleVariables %s", vars, exampleVariables)
	}
	_, page := get(t, Handler("/query"), "/")
	var got string
	for _, e := range elements(t, page) {
		if v, ok := e.attrs["data-default-query"]; ok {
			got = v
		}
	}
	if got != q {
		t.Errorf("page's data-default-query is not example.graphql:\n%s", got)
	}
}
