// Package backup serves and requests online backups of the embedded engine.
//
// A running server holds the data directory's lock, so `hbgraph backup`
// asks it over the admin listener: POST /backup with the target directory.
// The server pauses mutations (Gate) until those in flight have finished,
// so that no multi-row write is half in the copy, has the engine take its
// checkpoint, lets mutations go on, and verifies the copy against its
// manifest before answering.
package backup

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"runtime/debug"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/99designs/gqlgen/graphql"
	"github.com/rs/zerolog"
	"github.com/vektah/gqlparser/v2/ast"

	"github.com/hbgraph/hbgraph/store"
	"github.com/hbgraph/hbgraph/store/embedded"
	"github.com/hbgraph/hbgraph/store/keys"
)

// Route is the admin listener's backup route.
const Route = "/backup"

// Gate is a gqlgen extension that lets mutations run concurrently and a
// backup wait until none runs. It holds each mutation's root field: a
// store operation (several rows) is then either wholly before the backup
// or wholly after it.
type Gate struct{ mu sync.RWMutex }

var (
	_ graphql.HandlerExtension     = (*Gate)(nil)
	_ graphql.RootFieldInterceptor = (*Gate)(nil)
)

func (*Gate) ExtensionName() string                   { return "BackupGate" }
func (*Gate) Validate(graphql.ExecutableSchema) error { return nil }

// InterceptRootField runs a mutation's field while no backup holds the
// gate. gqlgen resolves a mutation's fields one after another, inside next.
func (g *Gate) InterceptRootField(ctx context.Context, next graphql.RootResolver) graphql.Marshaler {
	if oc := graphql.GetOperationContext(ctx); oc == nil || oc.Operation == nil || oc.Operation.Operation != ast.Mutation {
		return next(ctx)
	}
	g.mu.RLock()
	defer g.mu.RUnlock()
	return next(ctx)
}

// pause waits for the mutations in flight and holds back new ones until
// the returned function is called. They finish within --request-timeout.
func (g *Gate) pause() (resume func()) {
	g.mu.Lock()
	return g.mu.Unlock
}

// Request is POST /backup's body.
type Request struct {
	To      string `json:"to"`       // absolute; absent or an empty directory
	DataDir string `json:"data_dir"` // the caller's --data-dir, absolute: it must be the server's
}

// Handler serves POST /backup for the server over st and dataDir. allowed
// is false when the admin listener is beyond loopback and
// --allow-remote-backup was not given: the route then says so (403).
type Handler struct {
	Store   *store.Store
	Gate    *Gate
	DataDir string
	Allowed bool
	Log     zerolog.Logger

	running sync.Mutex // one backup at a time
}

func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if !h.Allowed {
		fail(w, http.StatusForbidden, errors.New("backups over the admin listener are off: it listens beyond loopback; run backup on this host with --admin-listen on loopback, or start the server with --allow-remote-backup"))
		return
	}
	var req Request
	if err := json.NewDecoder(io.LimitReader(r.Body, 64<<10)).Decode(&req); err != nil {
		fail(w, http.StatusBadRequest, errors.New(`the body must be JSON: {"to": "/absolute/dir", "data_dir": "/absolute/dir"}`))
		return
	}
	if err := h.check(req); err != nil {
		fail(w, http.StatusBadRequest, err)
		return
	}
	if !h.running.TryLock() {
		fail(w, http.StatusConflict, errors.New("a backup is already running"))
		return
	}
	defer h.running.Unlock()
	start := time.Now()
	unpause := h.Gate.pause()
	paused := time.Now()
	var resumed time.Time
	resume := sync.OnceFunc(func() { unpause(); resumed = time.Now() })
	defer resume()
	m, err := store.Backup[*embedded.BackupManifest](r.Context(), h.Store, req.To, Labels(), resume)
	if err != nil {
		h.Log.Error().Err(err).Str("to", req.To).Msg("backup failed")
		status := http.StatusInternalServerError
		if errors.Is(err, embedded.ErrBackup) || errors.Is(err, store.ErrNoBackup) {
			status = http.StatusBadRequest
		}
		fail(w, status, err)
		return
	}
	h.Log.Info().Str("to", req.To).Dur("waited_for_mutations", paused.Sub(start)).Dur("mutations_paused", resumed.Sub(start)).Dur("took", time.Since(start)).
		Int64("bytes", m.Bytes).Msg("backup written and verified")
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(m)
}

// check refuses a relative target, one inside the data directory, one that
// exists and is not an empty directory of this user's, and a caller that
// names another data directory.
func (h *Handler) check(req Request) error {
	if !filepath.IsAbs(req.To) || !filepath.IsAbs(req.DataDir) {
		return errors.New(`"to" and "data_dir" must be absolute paths`)
	}
	if !sameDir(req.DataDir, h.DataDir) {
		return fmt.Errorf("this server serves the data directory %s, not %s: run backup with the server's --data-dir and --admin-listen", absOrSelf(h.DataDir), req.DataDir)
	}
	if Inside(req.To, h.DataDir) {
		return errors.New("the backup directory must be outside the data directory")
	}
	fi, err := os.Stat(req.To)
	if err == nil {
		// The server writes a copy of every row there: not into a
		// directory another user prepared (and can read).
		if st, ok := fi.Sys().(*syscall.Stat_t); ok && int(st.Uid) != os.Getuid() {
			return fmt.Errorf("%s belongs to another user; let backup create the directory", req.To)
		}
	}
	return nil
}

// Labels are the manifest's labels: this build's version and commit, and
// the article layout the store is in.
func Labels() map[string]string {
	labels := map[string]string{"article_layout_version": strconv.Itoa(keys.ArticleLayoutVersion)}
	if bi, ok := debug.ReadBuildInfo(); ok {
		labels["hbgraph_version"] = bi.Main.Version
		labels["go_version"] = bi.GoVersion
		for _, s := range bi.Settings {
			if s.Key == "vcs.revision" {
				labels["commit"] = s.Value
			}
		}
	}
	return labels
}

func fail(w http.ResponseWriter, status int, err error) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(map[string]string{"error": err.Error()})
}

// ErrNoServer: nothing answered on the admin address.
var ErrNoServer = errors.New("no hbgraph answers on the admin listener")

// Ask asks the server whose admin listener is adminAddr to back dataDir up
// into to (both absolute), and returns the verified backup's manifest.
func Ask(ctx context.Context, adminAddr, to, dataDir string) (*embedded.BackupManifest, error) {
	body, _ := json.Marshal(Request{To: to, DataDir: dataDir})
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, "http://"+adminAddr+Route, bytes.NewReader(body))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, fmt.Errorf("%w (%s): %w", ErrNoServer, adminAddr, err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if err != nil {
		return nil, fmt.Errorf("reading the server's answer: %w", err)
	}
	if resp.StatusCode != http.StatusOK {
		var e struct{ Error string }
		if json.Unmarshal(data, &e) == nil && e.Error != "" {
			return nil, fmt.Errorf("the server on %s: %s", adminAddr, e.Error)
		}
		return nil, fmt.Errorf("the server on %s answered %s: is it hbgraph with this version?", adminAddr, resp.Status)
	}
	var m embedded.BackupManifest
	if err := json.Unmarshal(data, &m); err != nil {
		return nil, fmt.Errorf("the server on %s answered no manifest: %w", adminAddr, err)
	}
	return &m, nil
}

func absOrSelf(p string) string {
	if a, err := filepath.Abs(p); err == nil {
		return a
	}
	return p
}

// resolve is p absolute with its symbolic links resolved, as far as they
// exist.
func resolve(p string) string {
	p = absOrSelf(p)
	if r, err := filepath.EvalSymlinks(p); err == nil {
		return r
	}
	dir, base := filepath.Split(p)
	if dir == p || dir == "" {
		return p
	}
	return filepath.Join(resolve(filepath.Clean(dir)), base)
}

func sameDir(a, b string) bool { return resolve(a) == resolve(b) }

// Inside reports whether p is dir or inside it, symbolic links resolved.
func Inside(p, dir string) bool {
	return within(resolve(p), resolve(dir))
}

func within(p, dir string) bool {
	rel, err := filepath.Rel(dir, p)
	return err == nil && (rel == "." || !strings.HasPrefix(rel, ".."+string(filepath.Separator)) && rel != "..")
}
