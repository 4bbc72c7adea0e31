// Command bare is the floor of `make bench-floor`: a bare net/http server
// that answers every request with the fixed JSON hbgraph answers Q0
// ({ __typename }) with, after reading the body. No GraphQL, no
// middleware, no store: what the machine, Go's HTTP server and the load
// driver cost and add to the latency, below which no server on this
// machine can go.
//
//	bare -listen 127.0.0.1:PORT
package main

import (
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/pprof"
	"os"
	"time"
)

// answer is the response body: hbgraph's to Q0, byte for byte.
var answer = []byte(`{"data":{"__typename":"Query"}}`)

func main() {
	listen := flag.String("listen", "127.0.0.1:0", "address to serve on (loopback)")
	profile := flag.String("pprof", "", "serve the profiler at this address too (its own listener), to compare with hbgraph's")
	flag.Parse()
	if *profile != "" {
		admin := http.NewServeMux()
		admin.HandleFunc("/debug/pprof/", pprof.Index)
		admin.HandleFunc("/debug/pprof/profile", pprof.Profile)
		admin.HandleFunc("/debug/pprof/trace", pprof.Trace)
		go func() { fmt.Fprintln(os.Stderr, "bare: pprof:", http.ListenAndServe(*profile, admin)) }()
	}
	ln, err := net.Listen("tcp", *listen)
	if err != nil {
		fmt.Fprintln(os.Stderr, "bare:", err)
		os.Exit(1)
	}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, _ *http.Request) { io.WriteString(w, "ok\n") })
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "application/json")
		w.Write(answer)
	})
	// The same server timeouts as hbgraph's (server.go), which cost a
	// deadline per read and write either way.
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 5 * time.Second, ReadTimeout: 10 * time.Second,
		WriteTimeout: 20 * time.Second, IdleTimeout: 120 * time.Second}
	fmt.Fprintln(os.Stderr, "bare: serving on", ln.Addr())
	if err := srv.Serve(ln); err != nil {
		fmt.Fprintln(os.Stderr, "bare:", err)
		os.Exit(1)
	}
}
