package main

import (
	"bytes"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/rs/zerolog"

	"github.com/hbgraph/hbgraph/edge"
	"github.com/hbgraph/hbgraph/internal/memstore"
	"github.com/hbgraph/hbgraph/store"
)

// The HTTP floor in process (issue 27): what the gateway's handler costs a
// request above a bare handler, without the network and the server's
// connection handling (`make bench-floor` measures those end to end).
//
//	go test -run '^$' -bench GatewayFloor -benchmem .

// discardWriter is a ResponseWriter that keeps the headers and drops the
// body, as cheap as a writer can be.
type discardWriter struct {
	h      http.Header
	status int
}

func (w *discardWriter) Header() http.Header         { return w.h }
func (w *discardWriter) Write(p []byte) (int, error) { return len(p), nil }
func (w *discardWriter) WriteHeader(code int)        { w.status = code }

const floorQ1 = "# Q1: one node with its properties.\nquery Q1($id: ID!) {\n  node(id: $id) {\n    id\n    properties\n  }\n}\n"

func BenchmarkGatewayFloor(b *testing.B) {
	st, _ := memstore.New(b)
	if _, err := st.CreateNode(b.Context(), "n1", "", store.Properties{"name": "n1", "rank": 1}); err != nil {
		b.Fatal(err)
	}
	cfg, err := parseConfig([]string{"--log-level", "warn"})
	if err != nil {
		b.Fatal(err)
	}
	log := zerolog.Nop()
	gateway, _ := newGateway(cfg, st, log, security{})
	base := edge.BaseContext(cfg.auth.Enabled())(nil) // as run's server gives its requests
	answer := []byte(`{"data":{"__typename":"Query"}}`)
	bare := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "application/json")
		w.Write(answer)
	})
	for _, c := range []struct {
		name string
		h    http.Handler
		body string
	}{
		{"bare", bare, `{"query":"query Q0 { __typename }"}`},
		{"Q0", gateway, `{"query":"query Q0 { __typename }"}`},
		{"Q1", gateway, `{"query":` + jsonString(floorQ1) + `,"variables":{"id":"n1"}}`},
	} {
		b.Run(c.name, func(b *testing.B) {
			body := []byte(c.body)
			serve := func() *discardWriter {
				r := httptest.NewRequestWithContext(base, http.MethodPost, "/query", bytes.NewReader(body))
				r.Header.Set("Content-Type", "application/json")
				r.Header.Set("Accept", "application/json")
				w := &discardWriter{h: http.Header{}, status: http.StatusOK}
				c.h.ServeHTTP(w, r)
				return w
			}
			if w := serve(); w.status != http.StatusOK {
				b.Fatalf("status %d", w.status)
			}
			b.ReportAllocs()
			for b.Loop() {
				serve()
			}
		})
	}
}

func jsonString(s string) string {
	var buf bytes.Buffer
	buf.WriteByte('"')
	for _, c := range []byte(s) {
		switch c {
		case '\n':
			buf.WriteString(`\n`)
		case '"', '\\':
			buf.WriteByte('\\')
			buf.WriteByte(c)
		default:
			buf.WriteByte(c)
		}
	}
	buf.WriteByte('"')
	return buf.String()
}
