// Package edge is what stands between the network and the gateway's
// routes: which addresses count as loopback, the security headers every
// response carries, and CORS for browser pages on other origins.
package edge

import (
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"math/rand/v2"
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
// sniffing, no referrer sent on, no framing by another page (GraphiQL
// also says so in its Content-Security-Policy, for browsers that read it),
// and an X-Request-Id (RequestID), which the handlers behind read back from
// the response's header to log it under the same id.
func Headers(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		// The same values for every response, assigned rather than Set
		// (a slice each): headers are only read once written, and a
		// full slice an Add would append to is copied first.
		h := w.Header()
		h["X-Content-Type-Options"] = nosniff
		h["Referrer-Policy"] = noReferrer
		h["X-Frame-Options"] = deny
		h["X-Request-Id"] = []string{RequestID(r)}
		next.ServeHTTP(w, r)
	})
}

// NoStore marks every response of next as private to its caller: no cache
// may store it (an answer shows a token's subject what it owns), and one
// that ignores no-store still keys it by the Authorization header.
func NoStore(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h := w.Header()
		h["Cache-Control"] = noStore
		// After CORS's Vary: Origin when it ran first; otherwise assigned,
		// as in Headers (an Add would make a slice per request).
		if _, ok := h["Vary"]; ok {
			h.Add("Vary", "Authorization")
		} else {
			h["Vary"] = varyAuthorization
		}
		next.ServeHTTP(w, r)
	})
}

var (
	noStore           = []string{"no-store"}
	varyAuthorization = []string{"Authorization"}
)

// maxRequestID bounds a client's X-Request-Id.
const maxRequestID = 64

// RequestID is the client's X-Request-Id when it is short and made of
// [A-Za-z0-9._-] alone (it is echoed in a header and logged), else a
// fresh random id.
func RequestID(r *http.Request) string {
	if id := r.Header.Get("X-Request-Id"); safeRequestID(id) {
		return id
	}
	// Not a secret, only unique: math/rand/v2's generator (ChaCha8, per
	// thread) costs a tenth of crypto/rand's read.
	var b [8]byte
	binary.LittleEndian.PutUint64(b[:], rand.Uint64())
	return hex.EncodeToString(b[:])
}

func safeRequestID(id string) bool {
	if id == "" || len(id) > maxRequestID {
		return false
	}
	for i := 0; i < len(id); i++ {
		switch c := id[i]; {
		case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9', c == '.', c == '_', c == '-':
		default:
			return false
		}
	}
	return true
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
var alwaysAllowed = []string{"Content-Type", "Authorization", "X-Request-Id", "Accept", "Idempotency-Key"}

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
