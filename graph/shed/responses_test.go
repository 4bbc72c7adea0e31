package shed

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/99designs/gqlgen/graphql"
	"github.com/vektah/gqlparser/v2/gqlerror"

	"github.com/hbgraph/hbgraph/graph/codes"
)

// producing is a handler that charges its response in steps of step
// bytes up to size, holds the request until release is closed unless it
// was refused, settles and answers the refusal, if any, with the status a
// transport would.
func producing(size, step int64, entered *sync.WaitGroup, release chan struct{}) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var refused *gqlerror.Error
		for n := int64(0); n < size && refused == nil; n += step {
			refused = Charge(r.Context(), min(step, size-n))
		}
		entered.Done()
		if refused == nil {
			<-release
			refused = Settle(r.Context(), size)
		}
		if refused != nil && refused != Refusal(r.Context()) {
			panic("Refusal is not the error Charge returned")
		}
		w.WriteHeader(http.StatusOK)
		if refused != nil {
			_ = json.NewEncoder(w).Encode(map[string]any{"errors": []any{refused}})
		}
	})
}

func TestResponseOverTheLimitIsRefused(t *testing.T) {
	l := New(10, 1000, time.Second)
	l.LimitResponses(1<<20, 8<<20)
	var entered sync.WaitGroup
	release := make(chan struct{})
	close(release)
	for _, c := range []struct {
		name       string
		size, step int64
		want       string // "" answered
	}{
		{"at the limit, in small steps", 1 << 20, 100, ""},
		{"at the limit at once", 1 << 20, 1 << 20, ""},
		{"one byte over, in small steps", 1<<20 + 1, 100, codes.ResponseTooLarge},
		{"one byte over, settled", 1<<20 + 1, 1 << 30, codes.ResponseTooLarge},
		{"far over", 1 << 30, 1 << 20, codes.ResponseTooLarge},
	} {
		t.Run(c.name, func(t *testing.T) {
			entered.Add(1)
			rec := serve(l.Middleware(producing(c.size, c.step, &entered, release)))
			if rec.Code != http.StatusOK {
				t.Fatalf("status %d, want 200 (the transport chooses)", rec.Code)
			}
			if c.want == "" {
				if rec.Body.Len() != 0 {
					t.Fatalf("refused: %s", rec.Body)
				}
			} else if code := codeOf(t, rec); code != c.want || !strings.Contains(rec.Body.String(), "1048576 bytes") {
				t.Fatalf("code %s, body %s: want %s naming the limit", code, rec.Body, c.want)
			}
			if n := l.ResponseBytesInFlight(); n != 0 {
				t.Fatalf("after the request: %d response bytes in flight, want 0", n)
			}
		})
	}
}

// Past the response bytes in flight, a request is shed with 503 and
// Retry-After; one alone may always reach the limit on one response.
func TestResponseBytesInFlightShed(t *testing.T) {
	l := New(10, 1000, time.Second)
	l.LimitResponses(4<<20, 6<<20)
	var reasons []string
	var mu sync.Mutex
	l.OnShed = func(r string) { mu.Lock(); reasons = append(reasons, r); mu.Unlock() }

	release := make(chan struct{})
	var entered, done sync.WaitGroup
	entered.Add(1)
	done.Add(1)
	go func() {
		defer done.Done()
		if rec := serve(l.Middleware(producing(4<<20, 64<<10, &entered, release))); rec.Code != http.StatusOK || rec.Body.Len() != 0 {
			t.Errorf("the first request, alone: status %d, %s", rec.Code, rec.Body)
		}
	}()
	entered.Wait()
	if n := l.ResponseBytesInFlight(); n != 4<<20 {
		t.Fatalf("%d response bytes in flight, want 4 MiB", n)
	}

	// 3 MiB more would pass 6 MiB: shed.
	entered.Add(1)
	rec := serve(l.Middleware(producing(3<<20, 64<<10, &entered, release)))
	if rec.Code != http.StatusServiceUnavailable || rec.Header().Get("Retry-After") != "1" || codeOf(t, rec) != codes.Unavailable {
		t.Fatalf("3 MiB beside 4 of 6: status %d, Retry-After %q, %s; want 503 UNAVAILABLE", rec.Code, rec.Header().Get("Retry-After"), rec.Body)
	}
	// 1 MiB fits beside it.
	entered.Add(1)
	done.Add(1)
	go func() {
		defer done.Done()
		if rec := serve(l.Middleware(producing(1<<20, 64<<10, &entered, release))); rec.Code != http.StatusOK || rec.Body.Len() != 0 {
			t.Errorf("1 MiB beside 4 of 6: status %d, %s", rec.Code, rec.Body)
		}
	}()
	entered.Wait()
	close(release)
	done.Wait()
	if n := l.ResponseBytesInFlight(); n != 0 {
		t.Fatalf("after every request ended: %d response bytes in flight", n)
	}
	if len(reasons) != 1 || reasons[0] != ReasonResponseBytes {
		t.Fatalf("shed for %v, want once for %s", reasons, ReasonResponseBytes)
	}
}

// Outside the middleware nothing is counted or refused.
func TestChargeOutsideMiddleware(t *testing.T) {
	if err := Charge(context.Background(), 1<<40); err != nil {
		t.Fatal(err)
	}
	if err := Settle(context.Background(), 1<<40); err != nil {
		t.Fatal(err)
	}
	if err := Refusal(context.Background()); err != nil {
		t.Fatal(err)
	}
}

func TestValueSize(t *testing.T) {
	big := strings.Repeat("x", 2000)
	for _, c := range []struct {
		name string
		v    any
		want int64
	}{
		{"string", big, 2002},
		{"*string", &big, 2002},
		{"nil *string", (*string)(nil), 0},
		{"raw JSON", json.RawMessage(`{"a":1}`), 7},
		{"number", json.Number("12"), 2},
		{"object", map[string]any{"k": big}, 2 + 1 + 4 + 2002},
		{"list", []any{big, big}, 2 + 2*(1+2002)},
		{"struct", struct{}{}, 0},
		{"int", 7, 0},
	} {
		if got := valueSize(c.v, 1<<20); got != c.want {
			t.Errorf("%s: %d, want %d", c.name, got, c.want)
		}
	}
}

// CountFieldsAround counts what the inner middleware made of the field,
// as CountFields registered outside it would.
func TestCountFieldsAroundCountsTheInnerResult(t *testing.T) {
	l := New(10, 1000, time.Second)
	l.LimitResponses(2<<10, 8<<20)
	grow := func(ctx context.Context, next graphql.Resolver) (any, error) {
		res, err := next(ctx)
		return strings.Repeat(res.(string), 3<<10), err
	}
	var got []error
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		for _, mw := range []graphql.FieldMiddleware{CountFields, CountFieldsAround(grow)} {
			_, err := mw(r.Context(), func(context.Context) (any, error) { return "x", nil })
			got = append(got, err)
		}
	})
	serve(l.Middleware(h))
	if got[0] != nil {
		t.Errorf("CountFields of a 1-byte field: %v", got[0])
	}
	var gerr *gqlerror.Error
	if !errors.As(got[1], &gerr) || gerr.Extensions["code"] != codes.ResponseTooLarge {
		t.Errorf("CountFieldsAround of a field the inner middleware made 3 KiB, limit 2 KiB: %v, want %s", got[1], codes.ResponseTooLarge)
	}
}
