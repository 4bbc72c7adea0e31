// Command load sends one GraphQL query to a local server at a fixed
// concurrency for a fixed time and reports throughput, errors and latency:
//
//	go run ./bench/load -url http://127.0.0.1:8080/query -query-file Q.graphql \
//	    [-vars-file V.jsonl | -vars '{"id":"n1"}'] [-concurrency 16] \
//	    [-duration 10s] [-warmup 2s] [-timeout 5s] [-name Q1] [-json out.json]
//
// It talks only to loopback addresses: a URL whose host is not 127.0.0.0/8,
// ::1 or localhost is refused before anything is sent, and every dialed
// address is checked again (so localhost cannot resolve elsewhere).
// Proxies from the environment are ignored and redirects are not followed.
//
// Each request is a POST of {"query", "variables"}, the variables taken
// round-robin from -vars-file (JSON Lines, one object per line) in file
// order, so a run issues the same sequence of variables each time. All
// workers share one keep-alive http.Client with an idle pool as large as
// -concurrency.
//
// The run lasts -warmup plus -duration. A request counts if it started
// after the warm-up and finished before the end; requests still in flight
// at the end are cancelled and not counted. Each counted request is
// either ok (HTTP 200 and a JSON body without a non-empty "errors" array)
// or an error of one kind:
//
//	transport  the request failed (connection refused or reset, truncated body)
//	timeout    it took longer than -timeout
//	status     the HTTP status was not 200 (gqlgen answers invalid queries with 422)
//	graphql    a 200 whose body has a non-empty "errors" array
//	decode     a 200 whose body is not a JSON object
//
// Latency percentiles (nearest rank, exact: every latency is kept) are of
// ok requests, measured from sending the request to reading the whole body.
// The output is one line; -json also writes the figures as JSON. The exit
// status is 1 if no request succeeded.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"time"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := run(ctx, os.Args[1:], os.Stdout)
	stop()
	switch {
	case errors.Is(err, flag.ErrHelp):
		os.Exit(2)
	case err != nil:
		fmt.Fprintln(os.Stderr, "load:", err)
		os.Exit(1)
	}
}

// errNoSuccess is returned by run when the run completed but no request
// succeeded.
var errNoSuccess = errors.New("no request succeeded")

// run parses args, runs the load and prints the result line to stdout.
// Cancelling ctx ends the run early; the result covers what was measured.
func run(ctx context.Context, args []string, stdout io.Writer) error {
	fs := flag.NewFlagSet("load", flag.ContinueOnError)
	rawURL := fs.String("url", "http://127.0.0.1:8080/query", "GraphQL endpoint; the host must be a loopback address")
	queryFile := fs.String("query-file", "", "file holding the GraphQL query (required)")
	varsFile := fs.String("vars-file", "", "JSON Lines file, one variables object per line, used round-robin")
	vars := fs.String("vars", "", "one variables object, as JSON (instead of -vars-file)")
	concurrency := fs.Int("concurrency", 16, "requests in flight at once")
	duration := fs.Duration("duration", 10*time.Second, "how long to measure, after the warm-up")
	warmup := fs.Duration("warmup", 2*time.Second, "how long to send requests before measuring")
	timeout := fs.Duration("timeout", 5*time.Second, "limit on each request")
	name := fs.String("name", "", "name to report (default: the query file's base name)")
	jsonOut := fs.String("json", "", "also write the result as JSON to this file")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("unexpected arguments %q", fs.Args())
	}
	if *queryFile == "" {
		return errors.New("-query-file is required")
	}
	if *varsFile != "" && *vars != "" {
		return errors.New("give -vars-file or -vars, not both")
	}
	if *name == "" {
		*name = strings.TrimSuffix(filepath.Base(*queryFile), filepath.Ext(*queryFile))
	}
	// Refuse a bad URL before reading any file.
	if err := checkLoopbackURL(*rawURL); err != nil {
		return err
	}

	q, err := os.ReadFile(*queryFile)
	if err != nil {
		return err
	}
	cfg := config{
		url:         *rawURL,
		query:       string(q),
		concurrency: *concurrency,
		duration:    *duration,
		warmup:      *warmup,
		timeout:     *timeout,
		name:        *name,
	}
	switch {
	case *varsFile != "":
		f, err := os.Open(*varsFile)
		if err != nil {
			return err
		}
		cfg.vars, err = readVars(f)
		f.Close()
		if err != nil {
			return fmt.Errorf("%s: %w", *varsFile, err)
		}
	case *vars != "":
		v, err := readVars(strings.NewReader(*vars))
		if err != nil {
			return fmt.Errorf("-vars: %w", err)
		}
		if len(v) != 1 {
			return errors.New("-vars: want one JSON object")
		}
		cfg.vars = v
	}

	res, err := load(ctx, cfg)
	if err != nil {
		return err
	}
	fmt.Fprintln(stdout, res.line())
	if *jsonOut != "" {
		b, err := json.MarshalIndent(res, "", "  ")
		if err != nil {
			return err
		}
		if err := os.WriteFile(*jsonOut, append(b, '\n'), 0o644); err != nil {
			return err
		}
	}
	if res.OK == 0 {
		return errNoSuccess
	}
	return nil
}
