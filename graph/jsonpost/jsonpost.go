// Package jsonpost is hbgraph's GraphQL-over-HTTP transport: POST with a
// JSON body, and GET with the parameters in the URL, as the
// GraphQL-over-HTTP draft specifies them (its audit, npm graphql-http,
// passes every MUST, SHOULD and MAY).
//
// The response's media type is the one the Accept header prefers,
// application/json or application/graphql-response+json; the status code
// follows it:
//
//   - an operation that ran (data present, null or not, with or without
//     field errors): 200;
//   - a request error (the document does not parse or validate, the
//     operation is not found, variables do not coerce, a limit refuses it):
//     200 under application/json, 400 under application/graphql-response+json
//     (404 for PERSISTED_QUERY_NOT_FOUND, which Apollo's clients answer by
//     resending the document, and turn persisted queries off on a 400);
//   - a request that is not a GraphQL-over-HTTP request (a body that is not
//     one JSON object, a parameter of the wrong type, text that is not
//     UTF-8, a batch): 400, whatever the media type; a mutation sent with
//     GET: 405; an Accept header that allows neither media type: 406; a
//     POST that is not application/json: 415.
//
// A response to a request error carries no data entry.
//
// A response over the limit on response bytes (graph/shed: counted as the
// executor produces it, checked here at its exact size before a byte of
// it is written) is not sent: the answer is the refusal alone, with no
// data entry, RESPONSE_TOO_LARGE, and the status of a request error (200
// under application/json, 400 under application/graphql-response+json);
// one shed for the response bytes in flight is answered 503 UNAVAILABLE
// with Retry-After.
//
// gqlgen's transports write the whole response with encoding/json, which
// validates and re-compacts the data the executor has just written, byte
// by byte: 3.5% of the server's CPU on a 20-article page. These write the
// data as the executor wrote it and encode only the errors and extensions.
package jsonpost

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"

	"github.com/99designs/gqlgen/graphql"
	"github.com/vektah/gqlparser/v2/ast"
	"github.com/vektah/gqlparser/v2/gqlerror"

	"github.com/hbgraph/hbgraph/explain"
	"github.com/hbgraph/hbgraph/graph/codes"
	"github.com/hbgraph/hbgraph/graph/shed"
)

const (
	contentJSON            = "application/json"
	contentGraphQLResponse = "application/graphql-response+json"
)

// Transport answers POST requests; a body that is not application/json is
// refused with 415.
type Transport struct{}

// GET answers GET requests, their parameters in the URL; mutations are
// refused with 405.
type GET struct{}

// OtherMethods answers every request the transports before it did not
// take (PUT, DELETE, HEAD, a protocol upgrade): 405 with Allow and a
// BAD_USER_INPUT error, instead of gqlgen's uncoded "transport not
// supported". Add it last.
type OtherMethods struct{}

var (
	_ graphql.Transport = Transport{}
	_ graphql.Transport = GET{}
	_ graphql.Transport = OtherMethods{}
)

// Supports reports true: OtherMethods takes whatever is left.
func (OtherMethods) Supports(*http.Request) bool { return true }

// Do refuses the request with 405.
func (OtherMethods) Do(w http.ResponseWriter, r *http.Request, _ graphql.GraphExecutor) {
	w.Header().Set("Allow", "GET, POST, OPTIONS")
	Refuse(w, r, http.StatusMethodNotAllowed, "GraphQL is served over GET (queries) and POST, not "+r.Method)
}

// Supports reports whether r is a POST (and not a protocol upgrade).
func (Transport) Supports(r *http.Request) bool {
	return r.Method == http.MethodPost && r.Header.Get("Upgrade") == ""
}

// Supports reports whether r is a GET (and not a protocol upgrade).
func (GET) Supports(r *http.Request) bool {
	return r.Method == http.MethodGet && r.Header.Get("Upgrade") == ""
}

// Do reads the request's body, runs its operation and writes the response.
func (Transport) Do(w http.ResponseWriter, r *http.Request, exec graphql.GraphExecutor) {
	contentType, ok := negotiate(w, r, exec)
	if !ok {
		return
	}
	if !isJSONBody(r.Header.Get("Content-Type")) {
		refuse(w, r, exec, contentType, http.StatusUnsupportedMediaType, errors.New("the request body must be application/json, in UTF-8"))
		return
	}
	start := graphql.Now()
	body, err := io.ReadAll(r.Body)
	if err != nil {
		if tooLarge, ok := errors.AsType[*http.MaxBytesError](err); ok {
			refuse(w, r, exec, contentType, http.StatusRequestEntityTooLarge, fmt.Errorf("request body larger than %d bytes", tooLarge.Limit))
			return
		}
		refuse(w, r, exec, contentType, http.StatusBadRequest, errors.New("the request body could not be read"))
		return
	}
	params, err := decodeBody(body)
	if err != nil {
		refuse(w, r, exec, contentType, http.StatusBadRequest, err)
		return
	}
	params.ReadTime = graphql.TraceTiming{Start: start, End: graphql.Now()}
	run(w, r, exec, contentType, params, false)
}

// Do reads the request's URL parameters, runs its query and writes the
// response.
func (GET) Do(w http.ResponseWriter, r *http.Request, exec graphql.GraphExecutor) {
	contentType, ok := negotiate(w, r, exec)
	if !ok {
		return
	}
	start := graphql.Now()
	// r.URL.Query would drop the parameters it cannot decode.
	query, err := url.ParseQuery(r.URL.RawQuery)
	if err != nil {
		refuse(w, r, exec, contentType, http.StatusBadRequest, errors.New("the URL's query string is not well formed"))
		return
	}
	params, err := decodeQueryString(query.Get)
	if err != nil {
		refuse(w, r, exec, contentType, http.StatusBadRequest, err)
		return
	}
	params.ReadTime = graphql.TraceTiming{Start: start, End: graphql.Now()}
	run(w, r, exec, contentType, params, true)
}

// run builds the operation and, unless that fails or GET asks for a
// mutation, executes it and writes its response.
func run(w http.ResponseWriter, r *http.Request, exec graphql.GraphExecutor, contentType string, params *graphql.RawParams, onlyQueries bool) {
	ctx := r.Context()
	params.Headers = r.Header
	oc, errs := exec.CreateOperationContext(ctx, params)
	if errs != nil {
		resp := exec.DispatchError(graphql.WithOperationContext(ctx, oc), errs)
		w.WriteHeader(requestErrorStatus(contentType, resp.Errors))
		writeErrors(w, resp)
		return
	}
	if onlyQueries && oc.Operation.Operation != ast.Query {
		// Checked once the document is parsed, so the operation is the
		// one operationName picks (or the only one).
		w.Header().Set("Allow", http.MethodPost)
		refuse(w, r, exec, contentType, http.StatusMethodNotAllowed,
			fmt.Errorf("only queries may be sent with GET; use POST for %ss", oc.Operation.Operation))
		return
	}
	responses, ctx := exec.DispatchOperation(ctx, oc)
	resp := responses(ctx)
	if refused := shed.Settle(ctx, int64(len(resp.Data))); refused != nil {
		// The executor stopped producing it, or it is over at its exact
		// size: nothing of it is written.
		if rec := explain.From(ctx); rec != nil {
			operation, _ := rec.Outcome()
			rec.SetOutcome(operation, []string{refused.Extensions["code"].(string)})
		}
		errs := gqlerror.List{refused}
		w.WriteHeader(requestErrorStatus(contentType, errs)) // 503 when shed: the load shedder's writer says so
		writeErrors(w, &graphql.Response{Errors: errs, Extensions: resp.Extensions})
		return
	}
	write(w, resp)
}

// refuse answers a request that is not a GraphQL-over-HTTP request (or
// that GET may not run) with status and one BAD_USER_INPUT error, through
// the executor so that the error presenter and the response interceptors
// see it.
func refuse(w http.ResponseWriter, r *http.Request, exec graphql.GraphExecutor, contentType string, status int, err error) {
	gerr := &gqlerror.Error{Message: err.Error(), Extensions: map[string]any{"code": codes.BadUserInput}}
	resp := exec.DispatchError(r.Context(), gqlerror.List{gerr})
	setContentType(w.Header(), contentType)
	w.WriteHeader(status)
	writeErrors(w, resp)
}

// requestErrorStatus is the status of a request error: the operation was
// never executed (see the package comment).
func requestErrorStatus(contentType string, errs gqlerror.List) int {
	if contentType != contentGraphQLResponse {
		return http.StatusOK
	}
	for _, e := range errs {
		if e.Extensions["code"] == codes.PersistedQueryNotFound {
			return http.StatusNotFound
		}
	}
	return http.StatusBadRequest
}

// isJSONBody tells whether a request's Content-Type is application/json in
// UTF-8. The values clients send are compared first: mime.ParseMediaType
// allocates a map for every request.
func isJSONBody(value string) bool {
	switch value {
	case contentJSON, "application/json; charset=utf-8", "application/json;charset=utf-8", "application/json; charset=UTF-8":
		return true
	}
	mediaType, params, err := mime.ParseMediaType(value)
	return err == nil && mediaType == contentJSON && (params["charset"] == "" || strings.EqualFold(params["charset"], "utf-8"))
}

// Each response's Content-Type, one shared slice per media type: assigned,
// not Set, so that no request concatenates and allocates it (a Set or an
// Add by a handler after replaces or copies the slice, never writes into
// it).
var (
	headerJSON            = []string{contentJSON + "; charset=utf-8"}
	headerGraphQLResponse = []string{contentGraphQLResponse + "; charset=utf-8"}
)

// setContentType sets the response's Content-Type to contentType in UTF-8.
func setContentType(h http.Header, contentType string) {
	switch contentType {
	case contentJSON:
		h["Content-Type"] = headerJSON
	case contentGraphQLResponse:
		h["Content-Type"] = headerGraphQLResponse
	default:
		h.Set("Content-Type", contentType+"; charset=utf-8")
	}
}

// negotiate sets the response's Content-Type from r's Accept header. If
// the header allows neither of the media types, it answers 406 and returns
// false.
func negotiate(w http.ResponseWriter, r *http.Request, exec graphql.GraphExecutor) (string, bool) {
	contentType, ok := ContentType(r)
	setContentType(w.Header(), contentType)
	if !ok {
		refuse(w, r, exec, contentType, http.StatusNotAcceptable,
			errors.New("the Accept header allows neither "+contentGraphQLResponse+" nor "+contentJSON))
	}
	return contentType, ok
}

// ContentType is the media type of the response to r, the one its Accept
// header prefers: the highest q value, then the most specific range, then
// the first listed; application/json when there is no Accept header or it
// is */* alone. It returns false, with application/json, when the header
// allows neither media type.
func ContentType(r *http.Request) (string, bool) {
	values := r.Header.Values("Accept")
	if len(values) == 1 { // what clients send, without the parse's allocations
		switch values[0] {
		case contentJSON, "*/*":
			return contentJSON, true
		case contentGraphQLResponse:
			return contentGraphQLResponse, true
		}
	}
	accept := strings.Join(values, ",")
	if strings.TrimSpace(accept) == "" {
		return contentJSON, true
	}
	type match struct {
		q           float64
		specificity int // 3 the type itself, 2 application/*, 1 */*
		index       int
	}
	best := map[string]match{}
	for i, part := range strings.Split(accept, ",") {
		mediaType, params, err := mime.ParseMediaType(strings.TrimSpace(part))
		if err != nil {
			continue
		}
		q := 1.0
		if s, ok := params["q"]; ok {
			if q, err = strconv.ParseFloat(s, 64); err != nil || q < 0 || q > 1 {
				continue
			}
		}
		for _, ours := range []string{contentJSON, contentGraphQLResponse} {
			spec := 0
			switch mediaType {
			case ours:
				spec = 3
			case "application/*":
				spec = 2
			case "*/*":
				spec = 1
			}
			// The most specific range that matches gives the q value.
			if m, seen := best[ours]; spec > 0 && (!seen || spec > m.specificity) {
				best[ours] = match{q: q, specificity: spec, index: i}
			}
		}
	}
	j, g := best[contentJSON], best[contentGraphQLResponse]
	switch {
	case j.q == 0 && g.q == 0:
		return contentJSON, false
	case g.q != j.q:
		if g.q > j.q {
			return contentGraphQLResponse, true
		}
		return contentJSON, true
	case g.specificity != j.specificity:
		if g.specificity > j.specificity {
			return contentGraphQLResponse, true
		}
		return contentJSON, true
	case g.index < j.index:
		return contentGraphQLResponse, true
	}
	return contentJSON, true
}

// writeErrors writes a response that has no data entry: the request
// never reached execution.
func writeErrors(w io.Writer, resp *graphql.Response) {
	var buf bytes.Buffer
	buf.WriteString(`{"errors":`)
	encode(&buf, resp.Errors)
	if len(resp.Extensions) > 0 {
		buf.WriteString(`,"extensions":`)
		encode(&buf, resp.Extensions)
	}
	buf.WriteByte('}')
	_, _ = w.Write(buf.Bytes())
}

// envelopes are write's buffers: a response is copied once into one (the
// connection's writer copies it again), so each request need not
// allocate and clear a buffer the size of its response.
var envelopes = sync.Pool{New: func() any { return new(bytes.Buffer) }}

// maxPooledEnvelope bounds the buffers kept: one huge response does not
// pin its memory.
const maxPooledEnvelope = 1 << 20

func putEnvelope(buf *bytes.Buffer) {
	if buf.Cap() <= maxPooledEnvelope {
		envelopes.Put(buf)
	}
}

// writeError writes one error with code, for the answers given before any
// executor is at hand.
func writeError(w io.Writer, code, message string) {
	writeErrors(w, &graphql.Response{Errors: gqlerror.List{{Message: message, Extensions: map[string]any{"code": code}}}})
}

// Refuse answers r, outside the executor, with status and one
// BAD_USER_INPUT error carrying message, in the media type r's Accept
// header prefers (application/json if it allows neither). The middleware
// uses it for requests refused before the transport.
func Refuse(w http.ResponseWriter, r *http.Request, status int, message string) {
	RefuseWith(w, r, status, codes.BadUserInput, message)
}

// RefuseWith is Refuse with another code.
func RefuseWith(w http.ResponseWriter, r *http.Request, status int, code, message string) {
	contentType, _ := ContentType(r)
	setContentType(w.Header(), contentType)
	w.WriteHeader(status)
	writeError(w, code, message)
}

// write writes resp as encoding/json would, field for field, but copies
// its data verbatim: the executor wrote it, compact and valid. Data larger
// than a pooled envelope is written as it is, between the envelope's two
// halves, rather than copied once more.
func write(w io.Writer, resp *graphql.Response) {
	buf := envelopes.Get().(*bytes.Buffer)
	defer putEnvelope(buf)
	buf.Reset()
	inline := len(resp.Data) <= maxPooledEnvelope
	if inline {
		buf.Grow(len(resp.Data) + 128)
	}
	buf.WriteByte('{')
	if len(resp.Errors) > 0 {
		buf.WriteString(`"errors":`)
		encode(buf, resp.Errors)
		buf.WriteByte(',')
	}
	buf.WriteString(`"data":`)
	switch {
	case len(resp.Data) == 0:
		buf.WriteString("null")
	case inline:
		buf.Write(resp.Data)
	default:
		_, _ = w.Write(buf.Bytes())
		_, _ = w.Write(resp.Data)
		buf.Reset()
	}
	if resp.Label != "" {
		buf.WriteString(`,"label":`)
		encode(buf, resp.Label)
	}
	if len(resp.Path) > 0 {
		buf.WriteString(`,"path":`)
		encode(buf, resp.Path)
	}
	if resp.HasNext != nil {
		buf.WriteString(`,"hasNext":`)
		encode(buf, *resp.HasNext)
	}
	if len(resp.Extensions) > 0 {
		buf.WriteString(`,"extensions":`)
		encode(buf, resp.Extensions)
	}
	buf.WriteByte('}')
	_, _ = w.Write(buf.Bytes())
}

// encode appends v's JSON to buf. The values a response carries besides
// its data (errors, strings, paths, extension maps) always encode; if one
// does not, it is reported as null rather than as half a document.
func encode(buf *bytes.Buffer, v any) {
	b, err := json.Marshal(v)
	if err != nil {
		b = []byte("null")
	}
	buf.Write(b)
}
