// Package edge is what stands between the network and the gateway's
// routes: which addresses count as loopback, the security headers every
// response carries, and CORS for browser pages on other origins.
package edge

import (
	"fmt"
	"net"
	"net/http"
	"net/url"
	"strings"

	"github.com/rs/cors"
)

// Loopback tells whether addr (host:port, as for net.Listen) listens on
// loopback only. An empty host, an unspecified address and a name other
// than localhost listen beyond it.
func Loopback(addr string) bool {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return false
	}
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

var (
	nosniff    = []string{"nosniff"}
	noReferrer = []string{"no-referrer"}
	deny       = []string{"DENY"}
)

// Headers sets the headers every response of the gateway carries: no MIME
// sniffing, no referrer sent on, and no framing by another page (GraphiQL
// also says so in its Content-Security-Policy, for browsers that read it).
func Headers(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		// The same values for every response, assigned rather than Set
		// (a slice each): headers are only read once written, and a
		// full slice an Add would append to is copied first.
		h := w.Header()
		h["X-Content-Type-Options"] = nosniff
		h["Referrer-Policy"] = noReferrer
		h["X-Frame-Options"] = deny
		next.ServeHTTP(w, r)
	})
}

// CORS is which browser pages on other origins may call the GraphQL
// endpoint. The zero CORS allows none.
type CORS struct {
	Origins     []string // exact origins, scheme://host[:port]
	Credentials bool     // cookies and HTTP authentication
	Headers     []string // request headers beyond the ones always allowed
}

// ParseCORS reads comma-separated origins and headers; each origin must be
// scheme://host[:port] with no path, or "*" (which cannot go with
// credentials).
func ParseCORS(origins, headers string, credentials bool) (CORS, error) {
	c := CORS{Credentials: credentials}
	for _, o := range split(origins) {
		if o != "*" {
			u, err := url.Parse(o)
			if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || (u.Path != "" && u.Path != "/") || u.RawQuery != "" || u.User != nil {
				return CORS{}, fmt.Errorf("CORS origin %q: want scheme://host[:port]", o)
			}
			o = u.Scheme + "://" + u.Host
		} else if credentials {
			return CORS{}, fmt.Errorf(`CORS origin "*" cannot go with credentials: name the origins`)
		}
		c.Origins = append(c.Origins, o)
	}
	c.Headers = split(headers)
	return c, nil
}

func split(list string) []string {
	var out []string
	for _, s := range strings.Split(list, ",") {
		if s = strings.TrimSpace(s); s != "" {
			out = append(out, s)
		}
	}
	return out
}

// alwaysAllowed are the request headers a GraphQL client sends.
var alwaysAllowed = []string{"Content-Type", "Authorization", "X-Request-Id", "Accept"}

// Handler wraps next with c: preflights answered, the listed origins
// allowed GET and POST, X-Request-Id exposed to them; requests from any
// other origin get no CORS headers (the browser then withholds the
// answer).
func (c CORS) Handler(next http.Handler) http.Handler {
	if len(c.Origins) == 0 {
		return next // rs/cors reads no origins as every origin
	}
	return cors.New(cors.Options{
		AllowedOrigins:   c.Origins,
		AllowedMethods:   []string{http.MethodGet, http.MethodPost},
		AllowedHeaders:   append(append([]string(nil), alwaysAllowed...), c.Headers...),
		ExposedHeaders:   []string{"X-Request-Id"},
		AllowCredentials: c.Credentials,
		MaxAge:           600,
	}).Handler(next)
}
