package shed

import (
	"context"
	"encoding/json"
	"io"

	"github.com/99designs/gqlgen/graphql"
	"github.com/vektah/gqlparser/v2/gqlerror"

	"github.com/hbgraph/hbgraph/graph/codes"
)

// Response bytes. A small request can ask for a large response (an alias
// of a 1 MiB article body a hundred times), and the response is held in
// memory until it is written. So the bytes of each response are counted
// as the executor produces them (Charge; CountFields for gqlgen's
// executor; Settle with the exact size before it is written):
//
//   - past MaxResponseBytes, the response is refused with
//     RESPONSE_TOO_LARGE, and every later Charge of the request fails at
//     once, so the executor stops producing it;
//   - past MaxResponseBytesInFlight, the sum over the requests in flight,
//     the request that would cross it is shed like one over the complexity
//     in flight: 503, Retry-After, UNAVAILABLE. A request alone may always
//     reach MaxResponseBytes.
//
// Bytes are charged to the sum in flight in steps of chargeStep, so that
// small responses touch it once, at Settle; they are given back when the
// request ends.

// ReasonResponseBytes: the response bytes in flight would pass
// MaxResponseBytesInFlight.
const ReasonResponseBytes = "response_bytes"

// chargeStep is how many bytes a request counts before it charges them to
// the sum in flight.
const chargeStep = 64 << 10

// LimitResponses sets the bounds on response bytes: at most maxBytes in
// one response, at most maxInFlight in the responses of the requests in
// flight; 0 turns the bound off. Call it before serving.
func (l *Limiter) LimitResponses(maxBytes, maxInFlight int64) {
	l.maxResponse, l.maxResponseInFlight = maxBytes, maxInFlight
}

// ResponseBytesInFlight returns the response bytes charged by the
// requests in flight.
func (l *Limiter) ResponseBytesInFlight() int64 { return l.responseBytes.Load() }

// Charge counts n more bytes of ctx's response. It returns the request's
// refusal, RESPONSE_TOO_LARGE or UNAVAILABLE, once the response is over
// one of the bounds: the caller then stops producing the response and
// reports the error. Outside Middleware it counts nothing.
func Charge(ctx context.Context, n int64) *gqlerror.Error {
	t, ok := ctx.Value(ticketKey{}).(*ticket)
	if !ok {
		return nil
	}
	return t.charge(n, false)
}

// Settle raises the count of ctx's response to size, its exact size, and
// charges all of it to the sum in flight; it returns the request's refusal
// as Charge does. The transport calls it before writing the response.
func Settle(ctx context.Context, size int64) *gqlerror.Error {
	t, ok := ctx.Value(ticketKey{}).(*ticket)
	if !ok {
		return nil
	}
	t.mu.Lock()
	counted := t.bytes + t.pending
	t.mu.Unlock()
	return t.charge(max(0, size-counted), true)
}

// Refusal returns the error ctx's response was refused with, if it was.
func Refusal(ctx context.Context) *gqlerror.Error {
	t, ok := ctx.Value(ticketKey{}).(*ticket)
	if !ok {
		return nil
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.refusal
}

// charge counts n bytes, and charges what is counted to the sum in flight
// when it reaches chargeStep or flush is set.
func (t *ticket) charge(n int64, flush bool) *gqlerror.Error {
	l := t.l
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.refusal != nil {
		return t.refusal
	}
	t.pending += n
	if l.maxResponse > 0 && t.bytes+t.pending > l.maxResponse {
		t.refusal = gqlerror.Errorf("the response is larger than %d bytes, the limit on one response: ask for fewer fields, aliases or rows", l.maxResponse)
		t.refusal.Extensions = map[string]any{"code": codes.ResponseTooLarge}
		return t.refusal
	}
	if t.pending < chargeStep && !flush || t.pending == 0 {
		return nil
	}
	n, t.pending = t.pending, 0
	t.bytes += n
	now := l.responseBytes.Add(n)
	if l.maxResponseInFlight > 0 && now > l.maxResponseInFlight && now != t.bytes {
		t.shed = true
		if l.OnShed != nil {
			l.OnShed(ReasonResponseBytes)
		}
		t.refusal = gqlerror.Errorf("server busy: responses of %d bytes held at once, the limit is %d; retry after %s s",
			now-n, l.maxResponseInFlight, l.retryAfter)
		t.refusal.Extensions = map[string]any{"code": codes.Unavailable}
		return t.refusal
	}
	return nil
}

// largeValue is the least a value must weigh for CountFields to count it:
// smaller values are counted once, exactly, by Settle.
const largeValue = 1 << 10

// CountFields is a gqlgen field middleware (handler.Server.AroundFields)
// that charges the large values gqlgen's executor resolves (strings and
// JSON values of 1 KiB or more: article bodies, properties) to the
// request's response as they are resolved. Once the response is refused,
// each such field fails with the refusal instead of adding its value.
//
// gqlgen writes the response only once every field has resolved, those
// resolved before the refusal too: so a large String is resolved to a
// marshaler that writes it only if the response has not been refused by
// then, and a refused response never holds its large strings.
func CountFields(ctx context.Context, next graphql.Resolver) (any, error) {
	res, err := next(ctx)
	return countField(ctx, res, err)
}

// CountFieldsAround is CountFields around inner, another field middleware,
// in one: gqlgen allocates for each field middleware at every field it
// resolves, so two registered as one cost a field one allocation, not two.
func CountFieldsAround(inner graphql.FieldMiddleware) graphql.FieldMiddleware {
	return func(ctx context.Context, next graphql.Resolver) (any, error) {
		res, err := inner(ctx, next)
		return countField(ctx, res, err)
	}
}

// countField is CountFields once its field resolved to res, err.
func countField(ctx context.Context, res any, err error) (any, error) {
	if err != nil {
		return res, err
	}
	n := valueSize(res, largeValue)
	if n < largeValue {
		return res, nil
	}
	t, ok := ctx.Value(ticketKey{}).(*ticket)
	if !ok {
		return res, nil
	}
	if refused := t.charge(n, false); refused != nil {
		return nil, refused
	}
	if s, ok := res.(string); ok && isString(ctx) {
		return graphql.WriterFunc(func(w io.Writer) {
			if t.refused() {
				_, _ = io.WriteString(w, `""`) // never sent: the transport answers with the refusal
				return
			}
			graphql.MarshalString(s).MarshalGQL(w)
		}), nil
	}
	return res, nil
}

// isString reports whether the field resolving in ctx is of type String
// (gqlgen then accepts a marshaler in place of the string).
func isString(ctx context.Context) bool {
	fc := graphql.GetFieldContext(ctx)
	return fc != nil && fc.Field.Definition != nil && fc.Field.Definition.Type.NamedType == "String" && fc.Field.Definition.Type.Elem == nil
}

func (t *ticket) refused() bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.refusal != nil
}

// valueSize estimates the JSON size of a resolved scalar: a string's or
// an encoded value's length, a decoded JSON value's strings and numbers
// plus a little for punctuation. It stops adding once the size reaches
// enough, and returns 0 for values of other types (objects, lists of
// objects), whose fields are counted when they resolve.
func valueSize(v any, enough int64) int64 {
	switch v := v.(type) {
	case string:
		return int64(len(v)) + 2
	case *string:
		if v != nil {
			return int64(len(*v)) + 2
		}
	case json.RawMessage:
		return int64(len(v))
	case json.Number:
		return int64(len(v))
	case map[string]any:
		var n int64 = 2
		for k, e := range v {
			n += int64(len(k)) + 4 + valueSize(e, enough-n)
			if n >= enough {
				break
			}
		}
		return n
	case []any:
		var n int64 = 2
		for _, e := range v {
			n += 1 + valueSize(e, enough-n)
			if n >= enough {
				break
			}
		}
		return n
	}
	return 0
}
