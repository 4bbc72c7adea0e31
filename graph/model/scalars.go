package model

import (
	"encoding/json"
	"io"
	"time"

	"github.com/99designs/gqlgen/graphql"

	"github.com/hbgraph/hbgraph/graph/fields"
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

// MarshalTime writes an RFC 3339 timestamp in UTC with milliseconds.
func MarshalTime(t time.Time) graphql.Marshaler {
	return graphql.WriterFunc(func(w io.Writer) {
		_, _ = w.Write(fields.Time.Append(nil, t))
	})
}

// UnmarshalTime reads a Time argument (fields.ParseTime, which the plan
// decodes with).
func UnmarshalTime(v any) (time.Time, error) {
	return fields.ParseTime(v)
}
