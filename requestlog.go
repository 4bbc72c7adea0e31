package main

import (
	"fmt"
	"net/http"
	"os"
	"time"

	"github.com/rs/zerolog"

	"github.com/hbgraph/hbgraph/edge"
	"github.com/hbgraph/hbgraph/graph/limits"
)

// logTimeFormat is RFC 3339 with milliseconds: requests a few
// milliseconds apart are told apart in the log.
const logTimeFormat = "2006-01-02T15:04:05.000Z07:00"

// newLogger is the process's logger: JSON lines on stderr, or with
// --log-format console a human's lines, coloured only on a terminal (a
// file or a journal would keep the escape codes), both with full
// timestamps.
func newLogger(cfg config) (zerolog.Logger, error) {
	level, err := zerolog.ParseLevel(cfg.logLevel)
	if err != nil {
		return zerolog.Logger{}, fmt.Errorf("log level: %w", err)
	}
	zerolog.TimeFieldFormat = logTimeFormat
	out := zerolog.New(os.Stderr)
	if cfg.logFormat == "console" {
		out = zerolog.New(zerolog.ConsoleWriter{Out: os.Stderr, NoColor: !isTerminal(os.Stderr), TimeFormat: logTimeFormat})
	}
	return out.Level(level).With().Timestamp().Logger(), nil
}

// isTerminal reports whether f is a terminal (a character device).
func isTerminal(f *os.File) bool {
	fi, err := f.Stat()
	return err == nil && fi.Mode()&os.ModeCharDevice != 0
}

// milliseconds is d in milliseconds, fractions kept: the unit every
// duration in the log carries in its name (_ms).
func milliseconds(d time.Duration) float64 {
	return float64(d) / float64(time.Millisecond)
}

// limitsDict is the per-document bounds under the names of their flags.
func limitsDict(l limits.Config) *zerolog.Event {
	return zerolog.Dict().Int("max_tokens", l.Tokens).Int("max_nesting", l.Nesting).Int("max_fields", l.Fields).
		Int("max_aliases", l.Aliases).Int("max_repeats", l.Repeats).Int("max_fragments", l.Fragments).
		Int("max_variables", l.Variables).Int("max_depth", l.Depth).Int("max_complexity", l.Complexity).
		Int("max_errors", l.Errors)
}

// logRoutes logs the requests of every route but /query (which observe
// logs at info) at debug level: GraphiQL's page and assets, the health and
// readiness probes, the metrics scrapes; a probe every second would bury
// the requests at info.
func logRoutes(log zerolog.Logger, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/query" || log.GetLevel() > zerolog.DebugLevel {
			next.ServeHTTP(w, r)
			return
		}
		start := time.Now()
		sw := &statusRecorder{ResponseWriter: w, status: http.StatusOK}
		next.ServeHTTP(sw, r)
		log.Debug().Str("method", r.Method).Str("path", truncate(r.URL.Path, maxLoggedOperation)).
			Str("client", edge.ClientAddress(r)).Int("status", sw.status).
			Float64("duration_ms", milliseconds(time.Since(start))).Msg("http")
	})
}
