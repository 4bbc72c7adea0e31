package model

import (
	"encoding/json"
	"io"
	"time"

	"github.com/99designs/gqlgen/graphql"

	"github.com/hbgraph/hbgraph/graph/fields"
	"github.com/hbgraph/hbgraph/store"
)

// MarshalJSON writes a JSON scalar (a property map or one property value).
func MarshalJSON(v any) graphql.Marshaler {
	return graphql.WriterFunc(func(w io.Writer) {
		if raw, ok := v.(json.RawMessage); ok { // as fields.AppendJSON, without a copy
			_, _ = w.Write(raw)
			return
		}
		_, _ = w.Write(fields.JSON.Append(nil, v)) // the plan's writing, by construction
	})
}

// UnmarshalJSON accepts any JSON value; resolvers check that properties
// are an object and the store checks the values.
func UnmarshalJSON(v any) (any, error) {
	return v, nil
}

// errNotTime words a Time argument that is not one without quoting it or
// naming a Go type; the error's path names the argument.
var errNotTime = &store.Refusal{Kind: store.ErrInvalidInput, Reason: "a Time must be an RFC 3339 string, such as 2024-05-01T12:00:00Z"}

// MarshalTime writes an RFC 3339 timestamp in UTC with milliseconds.
func MarshalTime(t time.Time) graphql.Marshaler {
	return graphql.WriterFunc(func(w io.Writer) {
		_, _ = w.Write(fields.Time.Append(nil, t))
	})
}

// UnmarshalTime reads an RFC 3339 timestamp. A value that is not one is
// the client's input error (validation lets any string through).
func UnmarshalTime(v any) (time.Time, error) {
	s, ok := v.(string)
	if !ok {
		return time.Time{}, errNotTime
	}
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		return time.Time{}, errNotTime
	}
	return t, nil
}
