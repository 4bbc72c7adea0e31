// Package graphiql serves hbgraph's GraphiQL page, and every file the page
// loads, from hbgraph itself.
//
// Why: gqlgen's playground page loads GraphiQL, React and the explorer
// plugin from a public CDN, and hbgraph runs in networks that reach no CDN,
// where that page stays blank. This package embeds a vendored copy of their
// browser (UMD) builds instead: graphiql/assets, fetched from the npm
// registry by scripts/vendor-graphiql.sh and checked against
// assets/SHA256SUMS, with the versions recorded once, in versions.env.
//
// Handler serves
//
//	GET /                                   the page
//	GET /assets/<package>-<version>/<file>  a vendored file
//	GET /assets/hbgraph-<sha256>/<file>     the page's own script and style
//
// Every asset's path changes with its content (a version or a hash), so
// assets are cached for a year as immutable; the page itself is no-cache.
// Each <script> and <link> of the page carries an integrity attribute, the
// sha384 of the embedded bytes, computed once when Handler is called.
//
// The page runs no inline script: GraphiQL is started by a served file,
// static/graphiql-init.js, which reads its settings (the endpoint, the
// example query of example.graphql and its variables) from data-*
// attributes. So its Content-Security-Policy allows scripts, styles and
// connections from 'self' only, images and fonts also from data: URLs
// (GraphiQL's stylesheet inlines its fonts and icons that way), and no
// framing. GraphiQL styles elements through the CSSOM, which CSP does not
// govern, except for the one <style> element Radix's dialogs add; that one
// is let in by a per-request nonce instead of 'unsafe-inline' (see
// graphiql-init.js).
//
// The page is written here rather than with gqlgen's playground.Handler
// and its WithGraphiqlVersion, WithGraphiqlReactVersion and
// WithGraphiqlPluginExplorerVersion options: those can point every asset at
// our paths with SRI, but that page starts GraphiQL from a long inline
// script (the CSP would need its hash, which changes with gqlgen) and
// cannot open on an example query.
package graphiql

import (
	"bufio"
	"bytes"
	"crypto/rand"
	"crypto/sha256"
	"crypto/sha512"
	"embed"
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"html/template"
	"net/http"
	"net/url"
	"path"
	"strings"
	"time"
)

//go:embed versions.env example.graphql assets static
var files embed.FS

// AssetsPrefix is the path under which Handler serves the page's files.
const AssetsPrefix = "/assets/"

// exampleVariables go with example.graphql: alice is the node whose
// neighbourhood the example data shows (hbgraph --example-data, package
// example).
const exampleVariables = "{\n  \"id\": \"alice\"\n}"

// Versions are the versions of the vendored packages, from versions.env.
type Versions struct {
	GraphiQL, React, ReactDOM, PluginExplorer string
}

// VendoredVersions returns the versions of the vendored packages.
func VendoredVersions() Versions { return versions }

var versions = parseVersions(mustRead("versions.env"))

func mustRead(name string) []byte {
	b, err := files.ReadFile(name)
	if err != nil {
		panic("graphiql: " + err.Error())
	}
	return b
}

// parseVersions reads versions.env's NAME=VALUE lines.
func parseVersions(b []byte) Versions {
	m := map[string]string{}
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		k, v, ok := strings.Cut(line, "=")
		if !ok {
			panic(fmt.Sprintf("graphiql: versions.env: bad line %q", line))
		}
		m[k] = v
	}
	v := Versions{GraphiQL: m["GRAPHIQL"], React: m["REACT"], ReactDOM: m["REACT_DOM"], PluginExplorer: m["PLUGIN_EXPLORER"]}
	if v.GraphiQL == "" || v.React == "" || v.ReactDOM == "" || v.PluginExplorer == "" {
		panic(fmt.Sprintf("graphiql: versions.env lacks a version: %+v", v))
	}
	return v
}

// asset is one file the page loads.
type asset struct {
	path  string // URL path
	body  []byte
	ctype string // Content-Type
	etag  string
	sri   string // integrity attribute: sha384-<base64>
}

func newAsset(urlPath string, body []byte) *asset {
	s256 := sha256.Sum256(body)
	s384 := sha512.Sum384(body)
	ctype := "text/javascript; charset=utf-8"
	if path.Ext(urlPath) == ".css" {
		ctype = "text/css; charset=utf-8"
	}
	return &asset{
		path:  urlPath,
		body:  body,
		ctype: ctype,
		etag:  `"` + hex.EncodeToString(s256[:16]) + `"`,
		sri:   "sha384-" + base64.StdEncoding.EncodeToString(s384[:]),
	}
}

// vendored is a file of graphiql/assets, served at the same path under
// AssetsPrefix.
func vendored(pkgDir, name string) *asset {
	rel := pkgDir + "/" + name
	return newAsset(AssetsPrefix+rel, mustRead("assets/"+rel))
}

// own is a file of graphiql/static, served under a directory named after
// its content's hash.
func own(name string) *asset {
	body := mustRead("static/" + name)
	sum := sha256.Sum256(body)
	return newAsset(AssetsPrefix+"hbgraph-"+hex.EncodeToString(sum[:6])+"/"+name, body)
}

// ref is a <script> or <link> of the page.
type ref struct{ URL, SRI string }

type pageData struct {
	Styles, Scripts  []ref
	Endpoint         string
	DefaultQuery     string
	DefaultVariables string
	StyleNonce       string
}

// The scripts are deferred: they run in this order once the page is parsed.
var page = template.Must(template.New("page").Parse(`<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="referrer" content="no-referrer">
<title>hbgraph · GraphiQL</title>
<link rel="icon" href="data:,">
{{- range .Styles}}
<link rel="stylesheet" href="{{.URL}}" integrity="{{.SRI}}">
{{- end}}
{{- range .Scripts}}
<script src="{{.URL}}" integrity="{{.SRI}}" defer></script>
{{- end}}
</head>
<body>
<div id="graphiql" data-endpoint="{{.Endpoint}}" data-style-nonce="{{.StyleNonce}}"
  data-default-query="{{.DefaultQuery}}" data-default-variables="{{.DefaultVariables}}">
<div class="loading">Loading GraphiQL…</div>
</div>
<noscript>GraphiQL needs JavaScript.</noscript>
</body>
</html>
`))

type handler struct {
	page   pageData // all but StyleNonce
	assets map[string]*asset
}

// Handler returns the handler of GraphiQL's page, for the GraphQL endpoint
// at the path endpoint of the same origin (e.g. "/query"; the page's CSP
// lets it connect nowhere else, so Handler panics on a URL with a scheme or
// host). It answers GET and HEAD of "/" with the page and of its files
// under AssetsPrefix, and 404 to any other path; Register mounts it on a
// ServeMux. It reads the embedded files and hashes them once, here.
func Handler(endpoint string) http.Handler {
	u, err := url.Parse(endpoint)
	if err != nil || u.Scheme != "" || u.Host != "" || !strings.HasPrefix(endpoint, "/") || strings.HasPrefix(endpoint, "//") {
		panic(fmt.Sprintf("graphiql: endpoint %q is not a path on this origin", endpoint))
	}
	v := versions
	styles := []*asset{
		vendored("graphiql-"+v.GraphiQL, "graphiql.min.css"),
		vendored("plugin-explorer-"+v.PluginExplorer, "style.css"),
		own("graphiql-page.css"),
	}
	scripts := []*asset{
		vendored("react-"+v.React, "react.production.min.js"),
		vendored("react-dom-"+v.ReactDOM, "react-dom.production.min.js"),
		vendored("graphiql-"+v.GraphiQL, "graphiql.min.js"),
		vendored("plugin-explorer-"+v.PluginExplorer, "index.umd.js"),
		own("graphiql-init.js"),
	}
	h := &handler{
		page: pageData{
			Endpoint:         endpoint,
			DefaultQuery:     string(mustRead("example.graphql")),
			DefaultVariables: exampleVariables,
		},
		assets: map[string]*asset{},
	}
	for _, a := range styles {
		h.page.Styles = append(h.page.Styles, ref{a.path, a.sri})
		h.assets[a.path] = a
	}
	for _, a := range scripts {
		h.page.Scripts = append(h.page.Scripts, ref{a.path, a.sri})
		h.assets[a.path] = a
	}
	return h
}

// Register mounts Handler(endpoint) on mux at "GET /{$}" (the page) and
// "GET /assets/" (its files).
func Register(mux *http.ServeMux, endpoint string) {
	h := Handler(endpoint)
	mux.Handle("GET /{$}", h)
	mux.Handle("GET "+AssetsPrefix, h)
}

func (h *handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		w.Header().Set("Allow", "GET, HEAD")
		http.Error(w, http.StatusText(http.StatusMethodNotAllowed), http.StatusMethodNotAllowed)
		return
	}
	if r.URL.Path == "/" {
		h.servePage(w)
		return
	}
	a, ok := h.assets[r.URL.Path]
	if !ok {
		http.NotFound(w, r)
		return
	}
	hd := w.Header()
	hd.Set("Content-Type", a.ctype)
	hd.Set("Cache-Control", "public, max-age=31536000, immutable")
	hd.Set("ETag", a.etag)
	hd.Set("X-Content-Type-Options", "nosniff")
	// ServeContent answers If-None-Match with 304, and Range and HEAD.
	http.ServeContent(w, r, "", time.Time{}, bytes.NewReader(a.body))
}

// contentSecurityPolicy is the page's CSP for one style nonce.
func contentSecurityPolicy(styleNonce string) string {
	return strings.Join([]string{
		"default-src 'self'",
		"script-src 'self'",
		"style-src 'self' 'nonce-" + styleNonce + "'",
		"img-src 'self' data:",
		"font-src 'self' data:",
		"connect-src 'self'",
		"object-src 'none'",
		"base-uri 'none'",
		"form-action 'none'",
		"frame-ancestors 'none'",
	}, "; ")
}

func (h *handler) servePage(w http.ResponseWriter) {
	var nonce [16]byte
	_, _ = rand.Read(nonce[:]) // never fails (crypto/rand)
	d := h.page
	d.StyleNonce = base64.RawURLEncoding.EncodeToString(nonce[:])
	var buf bytes.Buffer
	if err := page.Execute(&buf, d); err != nil {
		http.Error(w, "graphiql: "+err.Error(), http.StatusInternalServerError)
		return
	}
	hd := w.Header()
	hd.Set("Content-Type", "text/html; charset=utf-8")
	hd.Set("Content-Security-Policy", contentSecurityPolicy(d.StyleNonce))
	hd.Set("X-Content-Type-Options", "nosniff")
	hd.Set("Referrer-Policy", "no-referrer")
	hd.Set("X-Frame-Options", "DENY")
	hd.Set("Cache-Control", "no-cache")
	_, _ = w.Write(buf.Bytes())
}
