package shed

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"sync"
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

func serve(h http.Handler) *httptest.ResponseRecorder {
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest(http.MethodPost, "/query", nil))
	return rec
}

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
