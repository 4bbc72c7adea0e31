package edge

import (
	"net/http"
	"net/http/httptest"
	"testing"
)

func TestLoopback(t *testing.T) {
	for addr, want := range map[string]bool{
		"127.0.0.1:8080": true, "127.0.0.2:80": true, "[::1]:8080": true, "localhost:8080": true,
		":8080": false, "0.0.0.0:8080": false, "[::]:8080": false, "10.0.0.5:8080": false,
		"example.com:8080": false, "127.0.0.1": false, "": false,
	} {
		if got := Loopback(addr); got != want {
			t.Errorf("Loopback(%q) = %v, want %v", addr, got, want)
		}
	}
}

func TestParseCORS(t *testing.T) {
	c, err := ParseCORS(" https://app.example.com , http://127.0.0.1:3000/ ", "X-Trace", true)
	if err != nil || len(c.Origins) != 2 || c.Origins[1] != "http://127.0.0.1:3000" || c.Headers[0] != "X-Trace" {
		t.Errorf("ParseCORS: %+v, %v", c, err)
	}
	for _, bad := range []string{"app.example.com", "ftp://x", "https://x/path", "https://x?q=1", "https://u@x"} {
		if _, err := ParseCORS(bad, "", false); err == nil {
			t.Errorf("origin %q accepted", bad)
		}
	}
	if _, err := ParseCORS("*", "", true); err == nil {
		t.Error(`"*" with credentials accepted`)
	}
}

// TestCORS: a listed origin is allowed, with its preflight answered; any
// other origin, and every origin when none is listed, gets no CORS header.
func TestCORS(t *testing.T) {
	ok := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(http.StatusOK) })
	listed, err := ParseCORS("https://app.example.com", "", false)
	if err != nil {
		t.Fatal(err)
	}
	do := func(h http.Handler, method, origin string) *httptest.ResponseRecorder {
		r := httptest.NewRequest(method, "/query", nil)
		r.Header.Set("Origin", origin)
		if method == http.MethodOptions {
			r.Header.Set("Access-Control-Request-Method", http.MethodPost)
			r.Header.Set("Access-Control-Request-Headers", "authorization,content-type") // as browsers send them: sorted, lower case
		}
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		return w
	}
	h := listed.Handler(ok)
	if w := do(h, http.MethodPost, "https://app.example.com"); w.Header().Get("Access-Control-Allow-Origin") != "https://app.example.com" || w.Header().Get("Access-Control-Expose-Headers") != "X-Request-Id" {
		t.Errorf("listed origin: %v", w.Header())
	}
	w := do(h, http.MethodOptions, "https://app.example.com")
	if w.Code/100 != 2 || w.Header().Get("Access-Control-Allow-Origin") != "https://app.example.com" || w.Header().Get("Access-Control-Allow-Methods") != "POST" {
		t.Errorf("preflight of a listed origin: %d %v", w.Code, w.Header())
	}
	for _, h := range []http.Handler{h, CORS{}.Handler(ok)} {
		for _, method := range []string{http.MethodPost, http.MethodOptions} {
			if w := do(h, method, "https://evil.example"); w.Header().Get("Access-Control-Allow-Origin") != "" {
				t.Errorf("%s from an unlisted origin allowed: %v", method, w.Header())
			}
		}
	}
}

func TestHeaders(t *testing.T) {
	w := httptest.NewRecorder()
	Headers(http.NotFoundHandler()).ServeHTTP(w, httptest.NewRequest(http.MethodGet, "/", nil))
	for k, v := range map[string]string{"X-Content-Type-Options": "nosniff", "Referrer-Policy": "no-referrer", "X-Frame-Options": "DENY"} {
		if got := w.Header().Get(k); got != v {
			t.Errorf("%s: %q, want %q", k, got, v)
		}
	}
}
