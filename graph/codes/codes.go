// Package codes is the one vocabulary of extensions.code values hbgraph
// answers with. Every package that writes a code takes it from here, and
// the README lists each with the HTTP status it comes with.
//
// The vocabulary is gqlgen's codes for a document that does not parse or
// validate and for Apollo's persisted queries (clients act on those by
// name), plus hbgraph's own. Every limit on an operation (its depth,
// complexity, size, page sizes) is BAD_USER_INPUT: the client has to
// change the request.
package codes

const (
	// ParseFailed: the document is not GraphQL (gqlgen's code).
	ParseFailed = "GRAPHQL_PARSE_FAILED"
	// ValidationFailed: the document does not validate against the schema,
	// or names an operation it does not define (gqlgen's code).
	ValidationFailed = "GRAPHQL_VALIDATION_FAILED"
	// PersistedQueryNotFound: an automatic persisted query's hash is not
	// known yet; Apollo clients resend the document (gqlgen's code).
	PersistedQueryNotFound = "PERSISTED_QUERY_NOT_FOUND"

	// BadUserInput: an invalid argument, variable, id, cursor, page size or
	// property map; a request body that is not a GraphQL request; an
	// operation over a limit (too deep, too complex, too large).
	BadUserInput = "BAD_USER_INPUT"
	// NotFound: the thing a mutation names does not exist.
	NotFound = "NOT_FOUND"
	// AlreadyExists: a create of an id that exists.
	AlreadyExists = "ALREADY_EXISTS"
	// Conflict: a delete of a node that has relationships, or retries
	// exhausted under contention.
	Conflict = "CONFLICT"
	// Unavailable: the store did not answer in time, or the server is
	// shedding load (HTTP 503 with Retry-After).
	Unavailable = "UNAVAILABLE"
	// RateLimited: the client sent more than its rate limit allows (HTTP
	// 429 with Retry-After).
	RateLimited = "RATE_LIMITED"
	// Unauthenticated: the operation needs a valid token and the request
	// carried none, or carried one that is not valid (HTTP 401 with
	// WWW-Authenticate when the whole request is refused).
	Unauthenticated = "UNAUTHENTICATED"
	// Forbidden: the caller's token is valid but does not allow this: a
	// node of another owner, a scope it lacks.
	Forbidden = "FORBIDDEN"
	// PersistedQueryNotInList: with --trusted-documents-only, a document
	// that is not in the trusted documents manifest (Apollo Router's code).
	PersistedQueryNotInList = "PERSISTED_QUERY_NOT_IN_LIST"
	// ResponseTooLarge: the response grew past --max-response-bytes; it is
	// not sent, the client has to ask for less (fewer aliases, smaller
	// pages, fewer large fields).
	ResponseTooLarge = "RESPONSE_TOO_LARGE"
	// Internal: a bug; the response carries only the request id.
	Internal = "INTERNAL"
)

// Known reports whether code is one of the vocabulary's.
func Known(code string) bool {
	switch code {
	case ParseFailed, ValidationFailed, PersistedQueryNotFound,
		BadUserInput, NotFound, AlreadyExists, Conflict, Unavailable, RateLimited,
		Unauthenticated, Forbidden, PersistedQueryNotInList, ResponseTooLarge, Internal:
		return true
	}
	return false
}
