package main

import (
	"bufio"
	"bytes"
	"context"
	"crypto/tls"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"time"
)

// A worker sends its requests one at a time over one keep-alive
// connection of its own, written and read in the worker's goroutine.
//
// It does not use net/http's client: that one's transport hands every
// request and response between the caller and two goroutines per
// connection. That cost the load tool about 50 us of CPU per request (32
// us now), half a core at 10,000 req/s that the server under test, sharing
// the machine, then lacked. Responses are still parsed by net/http
// (http.ReadResponse), so chunked bodies and Connection: close are handled
// as the client would.
type worker struct {
	target  target
	timeout time.Duration
	dialer  net.Dialer

	conn net.Conn // nil until dialed, and after an error
	br   *bufio.Reader
	req  []byte       // the request being sent, reused
	buf  bytes.Buffer // the response body, reused
}

// target is where the requests go.
type target struct {
	addr string // host:port to dial
	host string // the Host header
	path string // the request URI
	tls  *tls.Config
}

// parseTarget splits a URL that checkLoopbackURL accepted.
func parseTarget(raw string) (target, error) {
	u, err := url.Parse(raw)
	if err != nil {
		return target{}, fmt.Errorf("-url: %w", err)
	}
	t := target{host: u.Host, path: u.RequestURI()}
	port := u.Port()
	if port == "" {
		port = "80"
		if u.Scheme == "https" {
			port = "443"
		}
	}
	t.addr = net.JoinHostPort(u.Hostname(), port)
	if u.Scheme == "https" {
		t.tls = &tls.Config{ServerName: u.Hostname()}
	}
	return t, nil
}

func newWorker(t target, timeout time.Duration) *worker {
	// No dial timeout: each request's ctx bounds its dial.
	return &worker{target: t, timeout: timeout, dialer: net.Dialer{Control: checkLoopbackDial}}
}

// do sends one request and reads the whole response.
func (w *worker) do(ctx context.Context, body []byte) outcome {
	ctx, cancel := context.WithTimeout(ctx, w.timeout)
	defer cancel()
	if w.conn == nil {
		if err := w.dial(ctx); err != nil {
			return failed(ctx, err)
		}
	}
	// The deadline covers the request's time limit and the end of the
	// run; a cancelled ctx (the command interrupted) cuts the wait short.
	deadline, _ := ctx.Deadline()
	conn := w.conn
	if err := conn.SetDeadline(deadline); err != nil {
		w.close()
		return failed(ctx, err)
	}
	stop := context.AfterFunc(ctx, func() { conn.SetDeadline(time.Unix(1, 0)) })
	defer stop()

	if _, err := conn.Write(w.request(body)); err != nil {
		w.close()
		return failed(ctx, err)
	}
	resp, err := http.ReadResponse(w.br, nil)
	if err != nil {
		w.close()
		return failed(ctx, err)
	}
	// Read the whole body, even of an error status, so the connection
	// can be reused.
	w.buf.Reset()
	_, err = w.buf.ReadFrom(resp.Body)
	resp.Body.Close()
	if err != nil || resp.Close {
		w.close()
	}
	if err != nil {
		return failed(ctx, err)
	}
	// A redirect could lead off the loopback interface; it is not
	// followed and counts as a status error.
	if resp.StatusCode != http.StatusOK {
		return outcomeStatus
	}
	var r struct {
		Errors []json.RawMessage `json:"errors"`
	}
	if err := json.Unmarshal(w.buf.Bytes(), &r); err != nil {
		return outcomeDecode
	}
	if len(r.Errors) > 0 {
		return outcomeGraphQL
	}
	return outcomeOK
}

// request returns the HTTP/1.1 request carrying body, in a buffer reused
// by the next call.
func (w *worker) request(body []byte) []byte {
	b := append(w.req[:0], "POST "...)
	b = append(b, w.target.path...)
	b = append(b, " HTTP/1.1\r\nHost: "...)
	b = append(b, w.target.host...)
	b = append(b, "\r\nUser-Agent: hbgraph-bench-load\r\nContent-Type: application/json\r\nAccept: application/json\r\nContent-Length: "...)
	b = strconv.AppendInt(b, int64(len(body)), 10)
	b = append(b, "\r\n\r\n"...)
	b = append(b, body...)
	w.req = b
	return b
}

// dial connects to the target, refusing any address that is not loopback.
func (w *worker) dial(ctx context.Context) error {
	conn, err := w.dialer.DialContext(ctx, "tcp", w.target.addr)
	if err != nil {
		return err
	}
	if w.target.tls != nil {
		tc := tls.Client(conn, w.target.tls)
		if err := tc.HandshakeContext(ctx); err != nil {
			conn.Close()
			return err
		}
		conn = tc
	}
	w.conn = conn
	if w.br == nil {
		w.br = bufio.NewReaderSize(conn, 32<<10)
	} else {
		w.br.Reset(conn)
	}
	return nil
}

// close drops the connection; the next request dials a new one.
func (w *worker) close() {
	if w.conn != nil {
		w.conn.Close()
		w.conn = nil
	}
}
