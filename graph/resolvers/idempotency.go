package resolvers

import (
	"context"
	"encoding/json"
	"strconv"

	"github.com/99designs/gqlgen/graphql"

	"github.com/hbgraph/hbgraph/auth"
	"github.com/hbgraph/hbgraph/store"
)

// IdempotencyKeyHeader is the request header that names a client's write,
// so that its retry (after UNAVAILABLE, on any replica) is recognised as
// the same write and applied at most once.
const IdempotencyKeyHeader = "Idempotency-Key"

// MaxIdempotencyKey is the longest Idempotency-Key, in bytes.
const MaxIdempotencyKey = 255

type idempotencyKey struct{}

// WithIdempotencyKey returns ctx carrying the values of the request's
// Idempotency-Key header (none, one, or a client's mistake of several),
// for the mutation resolvers to check and use.
func WithIdempotencyKey(ctx context.Context, values []string) context.Context {
	if len(values) == 0 {
		return ctx
	}
	return context.WithValue(ctx, idempotencyKey{}, values)
}

// errBadIdempotencyKey is an Idempotency-Key header we cannot use.
var errBadIdempotencyKey = &store.Refusal{Kind: store.ErrInvalidInput,
	Reason: "the Idempotency-Key header must be one value of 1 to 255 printable ASCII characters"}

// idempotencyKeyOf returns ctx's Idempotency-Key, whether there is one, or
// errBadIdempotencyKey.
func idempotencyKeyOf(ctx context.Context) (string, bool, error) {
	values, _ := ctx.Value(idempotencyKey{}).([]string)
	if len(values) == 0 {
		return "", false, nil
	}
	if len(values) > 1 || !validIdempotencyKey(values[0]) {
		return "", false, errBadIdempotencyKey
	}
	return values[0], true, nil
}

func validIdempotencyKey(k string) bool {
	if k == "" || len(k) > MaxIdempotencyKey {
		return false
	}
	for i := 0; i < len(k); i++ {
		if k[i] < 0x20 || k[i] > 0x7e {
			return false
		}
	}
	return true
}

// writeContext is ctx for the store's writes of the mutation field being
// resolved: who writes (for the ownership check the store makes inside its
// compare-and-set), and the write's op. With an Idempotency-Key the op is
// derived from the caller's subject, the key, the field's position in the
// operation, its name and its arguments (canonical JSON), so the same
// request sent again, to any replica, is the same write; a different
// mutation under a reused key is another. Without one, the field carries
// no op and the store makes the write a fresh one (which still covers
// gohbase's re-sends of its RPCs): an op in the context tells the store
// that the caller may send the write again, which costs it an op row for
// each deletion and post, and no retry can ever repeat a fresh op.
func writeContext(ctx context.Context) (context.Context, error) {
	key, given, err := idempotencyKeyOf(ctx)
	if err != nil {
		return ctx, err
	}
	p := auth.From(ctx)
	if given {
		fc := graphql.GetFieldContext(ctx)
		if fc == nil {
			return ctx, errBadIdempotencyKey
		}
		args, err := json.Marshal(fc.Args) // map keys sorted: canonical
		if err != nil {
			return ctx, err
		}
		ctx = store.WithOp(ctx, store.DeriveOpID(p.Subject, key, strconv.Itoa(rootFieldPosition(ctx, fc)), fc.Field.Name, string(args)))
	}
	return store.WithWriter(ctx, store.Writer{Subject: p.Subject, Admin: p.Admin}), nil
}

// rootFieldPosition is the position of fc among the operation's root
// fields (0, 1, ...), by response key.
func rootFieldPosition(ctx context.Context, fc *graphql.FieldContext) int {
	if !graphql.HasOperationContext(ctx) {
		return 0
	}
	oc := graphql.GetOperationContext(ctx)
	if oc.Operation == nil {
		return 0
	}
	for i, f := range graphql.CollectFields(oc, oc.Operation.SelectionSet, []string{"Mutation"}) {
		if f.Alias == fc.Field.Alias {
			return i
		}
	}
	return 0
}
