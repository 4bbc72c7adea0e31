package shed

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// blocking is a handler that admits its operation at the complexity the
// request names and holds the request until release is closed.
func blocking(l *Limiter, complexity int, entered *sync.WaitGroup, release chan struct{}) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		err := l.Admit(r.Context(), complexity)
		entered.Done()
		if err != nil {
			w.WriteHeader(http.StatusOK) // what a transport answers; the writer makes it 503
			_ = json.NewEncoder(w).Encode(map[string]any{"errors": []any{err}})
			return
		}
		<-release
		w.WriteHeader(http.StatusOK)
	})
}

// serve posts body to h.
func serveBody(h http.Handler, body string) *httptest.ResponseRecorder {
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest(http.MethodPost, "/query", strings.NewReader(body)))
	return rec
}

// serve posts a body no other request of the test sends.
func serve(h http.Handler) *httptest.ResponseRecorder {
	return serveBody(h, fmt.Sprintf(`{"query": "{ __typename }", "n": %d}`, requestNumber.Add(1)))
}

var requestNumber atomic.Int64

func codeOf(t *testing.T, rec *httptest.ResponseRecorder) string {
	t.Helper()
	var body struct {
		Errors []struct {
			Extensions map[string]any `json:"extensions"`
		} `json:"errors"`
	}
	if err := json.Unmarshal(rec.Body.Bytes(), &body); err != nil || len(body.Errors) == 0 {
		t.Fatalf("body %q: want a GraphQL error (%v)", rec.Body.String(), err)
	}
	code, _ := body.Errors[0].Extensions["code"].(string)
	return code
}

func TestInFlightLimitSheds(t *testing.T) {
	l := New(3, 1<<30, 2*time.Second)
	var shed []string
	l.OnShed = func(reason string) { shed = append(shed, reason) }
	release := make(chan struct{})
	var entered, done sync.WaitGroup
	h := l.Middleware(blocking(l, 1, &entered, release))
	for range 3 {
		entered.Add(1)
		done.Add(1)
		go func() { defer done.Done(); serve(h) }()
	}
	entered.Wait()

	rec := serve(h)
	if rec.Code != http.StatusServiceUnavailable || rec.Header().Get("Retry-After") != "2" {
		t.Fatalf("4th request with 3 in flight: status %d, Retry-After %q; want 503, 2", rec.Code, rec.Header().Get("Retry-After"))
	}
	if c := codeOf(t, rec); c != "UNAVAILABLE" {
		t.Fatalf("code %q, want UNAVAILABLE", c)
	}
	if len(shed) != 1 || shed[0] != ReasonInFlight {
		t.Fatalf("OnShed reasons %v, want [%s]", shed, ReasonInFlight)
	}

	close(release)
	done.Wait()
	if n, c := l.InFlight(); n != 0 || c != 0 {
		t.Fatalf("after every request ended: %d in flight, complexity %d", n, c)
	}
	entered.Add(1)
	if rec := serve(h); rec.Code != http.StatusOK {
		t.Fatalf("after the others ended: status %d, want 200", rec.Code)
	}
}

func TestComplexityLimitSheds(t *testing.T) {
	l := New(100, 1000, time.Second)
	release := make(chan struct{})
	var entered, done sync.WaitGroup
	entered.Add(1)
	done.Add(1)
	go func() { defer done.Done(); serve(l.Middleware(blocking(l, 900, &entered, release))) }()
	entered.Wait()

	entered.Add(1)
	rec := serve(l.Middleware(blocking(l, 200, &entered, release)))
	if rec.Code != http.StatusServiceUnavailable || rec.Header().Get("Retry-After") != "1" {
		t.Fatalf("complexity 200 beside 900 of 1000: status %d, Retry-After %q; want 503, 1", rec.Code, rec.Header().Get("Retry-After"))
	}
	if c := codeOf(t, rec); c != "UNAVAILABLE" {
		t.Fatalf("code %q, want UNAVAILABLE", c)
	}

	// A cheap operation still fits beside the expensive one.
	entered.Add(1)
	done.Add(1)
	go func() {
		defer done.Done()
		if rec := serve(l.Middleware(blocking(l, 100, &entered, release))); rec.Code != http.StatusOK {
			t.Errorf("complexity 100 beside 900 of 1000: status %d, want 200", rec.Code)
		}
	}()
	entered.Wait()
	close(release)
	done.Wait()
	if n, c := l.InFlight(); n != 0 || c != 0 {
		t.Fatalf("after every request ended: %d in flight, complexity %d", n, c)
	}
}

func TestOperationAloneIsAdmittedOverTheLimit(t *testing.T) {
	l := New(10, 100, time.Second)
	var entered sync.WaitGroup
	entered.Add(1)
	release := make(chan struct{})
	close(release)
	if rec := serve(l.Middleware(blocking(l, 5000, &entered, release))); rec.Code != http.StatusOK {
		t.Fatalf("an operation alone over the complexity limit: status %d, want 200", rec.Code)
	}
}

// TestRepeatedRefusalIsCheap: while the complexity executing is high, a
// request refused for complexity and sent again is refused before the
// handler sees it; the handler still gets its body whole otherwise.
func TestRepeatedRefusalIsCheap(t *testing.T) {
	l := New(100, 1000, time.Second)
	var reasons []string
	l.OnShed = func(reason string) { reasons = append(reasons, reason) }
	release := make(chan struct{})
	var entered, done sync.WaitGroup
	entered.Add(1)
	done.Add(1)
	go func() { defer done.Done(); serve(l.Middleware(blocking(l, 900, &entered, release))) }()
	entered.Wait()

	var handled atomic.Int64
	var bodies []string
	heavy := l.Middleware(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		handled.Add(1)
		b, _ := io.ReadAll(r.Body)
		bodies = append(bodies, string(b))
		if err := l.Admit(r.Context(), 200); err != nil {
			w.WriteHeader(http.StatusOK)
			return
		}
		w.WriteHeader(http.StatusOK)
	}))
	const body = `{"query": "{ heavy }"}`
	for i := range 3 {
		if rec := serveBody(heavy, body); rec.Code != http.StatusServiceUnavailable {
			t.Fatalf("heavy request %d beside 900 of 1000: status %d, want 503", i+1, rec.Code)
		}
	}
	if n := handled.Load(); n != 1 {
		t.Fatalf("the handler saw %d of 3 identical refused requests, want only the first", n)
	}
	if bodies[0] != body {
		t.Fatalf("the handler read %q, want the body sent, %q", bodies[0], body)
	}
	if want := []string{ReasonComplexity, ReasonRepeated, ReasonRepeated}; fmt.Sprint(reasons) != fmt.Sprint(want) {
		t.Fatalf("reasons %v, want %v", reasons, want)
	}
	if rec := serveBody(heavy, `{"query": "{ other }"}`); rec.Code != http.StatusServiceUnavailable || handled.Load() != 2 {
		t.Fatalf("another body: status %d, handled %d; want 503 from the handler", rec.Code, handled.Load())
	}
	close(release)
	done.Wait()
	// With nothing executing, the same request reaches the handler again.
	if rec := serveBody(heavy, body); rec.Code != http.StatusOK || handled.Load() != 3 {
		t.Fatalf("after the heavy one ended: status %d, handled %d; want 200 from the handler", rec.Code, handled.Load())
	}
}
