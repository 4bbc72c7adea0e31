package main

import (
	"bytes"
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"

	"github.com/rs/zerolog"
	"github.com/tsuna/gohbase"
	"github.com/tsuna/gohbase/hrpc"
	"github.com/tsuna/gohbase/pb"
	"github.com/tsuna/gohbase/region"

	"github.com/hbgraph/hbgraph/loaders"
	"github.com/hbgraph/hbgraph/store/keys"
)

// recordingAdmin captures CreateTable requests as the region server would
// read them.
type recordingAdmin struct {
	gohbase.AdminClient // other methods are not used
	created             map[string]*pb.CreateTableRequest
	exists              string
}

func (a *recordingAdmin) CreateTable(t *hrpc.CreateTable) error {
	if string(t.Table()) == a.exists {
		return errors.New("org.apache.hadoop.hbase.TableExistsException: " + a.exists)
	}
	t.SetRegion(region.NewInfo(0, nil, t.Table(), nil, nil, nil))
	a.created[string(t.Table())] = t.ToProto().(*pb.CreateTableRequest)
	return nil
}

func TestCreateTablesDeclaresEveryTableOneVersionPreSplit(t *testing.T) {
	admin := &recordingAdmin{created: map[string]*pb.CreateTableRequest{}, exists: keys.TableWordCounts}
	var out bytes.Buffer
	if err := createTables(context.Background(), admin, 8, &out); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), "exists  "+keys.TableWordCounts) {
		t.Errorf("an existing table is not reported as such:\n%s", out.String())
	}
	splits, _ := keys.SplitKeys(8)
	for table, families := range keys.Tables() {
		if table == keys.TableWordCounts {
			continue
		}
		req, ok := admin.created[table]
		if !ok {
			t.Fatalf("table %s not created", table)
		}
		if got := req.GetSplitKeys(); len(got) != len(splits) || !bytes.Equal(got[0], splits[0]) {
			t.Errorf("%s split keys %x, want %x", table, got, splits)
		}
		cfs := req.GetTableSchema().GetColumnFamilies()
		var names []string // in no order: hrpc takes the families as a map
		for _, cf := range cfs {
			names = append(names, string(cf.GetName()))
			for _, attr := range cf.GetAttributes() {
				if string(attr.GetFirst()) == "VERSIONS" && string(attr.GetSecond()) != "1" {
					t.Errorf("%s:%s VERSIONS = %s, want 1", table, cf.GetName(), attr.GetSecond())
				}
			}
		}
		if slices.Sort(names); !slices.Equal(names, families) {
			t.Fatalf("%s families %v, want %v", table, names, families)
		}
	}
}

func TestRepairCommandOnEmbeddedStore(t *testing.T) {
	dir := t.TempDir()
	// A directory that holds no store is refused, not given an empty one.
	if err := run([]string{"--data-dir", dir, "--log-level", "error", "repair"}); err == nil || !strings.Contains(err.Error(), "holds no hbgraph store") {
		t.Fatalf("repair on an empty directory: %v", err)
	}
	hc, err := openHBase(config{dataDir: dir}, zerolog.Nop())
	if err != nil {
		t.Fatal(err)
	}
	hc.Close()
	if err := run([]string{"--data-dir", dir, "--log-level", "error", "repair"}); err != nil {
		t.Fatal(err)
	}
	if err := run([]string{"--data-dir", dir, "create-tables"}); !errors.Is(err, errNeedCluster) {
		t.Fatalf("create-tables without a cluster: %v", err)
	}
	if err := run([]string{"--data-dir", dir, "frobnicate"}); err == nil {
		t.Fatal("an unknown command ran")
	}
}

func TestPprofOnlyWithFlag(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want int
	}{{nil, http.StatusNotFound}, {[]string{"--pprof"}, http.StatusOK}} {
		cfg, err := parseConfig(tc.args)
		if err != nil {
			t.Fatal(err)
		}
		gateway, admin := newGateway(cfg, nil, zerolog.Nop(), security{})
		rec := httptest.NewRecorder()
		admin.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/debug/pprof/", nil))
		if rec.Code != tc.want {
			t.Errorf("%v: /debug/pprof/ on the admin listener answered %d, want %d", tc.args, rec.Code, tc.want)
		}
		// Never beside GraphQL, nor the metrics.
		for _, path := range []string{"/debug/pprof/", "/metrics"} {
			rec = httptest.NewRecorder()
			gateway.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, path, nil))
			if rec.Code == http.StatusOK {
				t.Errorf("%v: %s answered on the gateway's listener", tc.args, path)
			}
		}
	}
}

func TestFlagsBeforeOrAfterTheCommand(t *testing.T) {
	for _, args := range [][]string{
		{"--data-dir", "d", "import", "--nodes", "n.jsonl"},
		{"import", "--data-dir", "d", "--nodes", "n.jsonl"},
	} {
		cfg, err := parseConfig(args)
		if err != nil {
			t.Fatalf("%q: %v", args, err)
		}
		if cfg.command != "import" || cfg.dataDir != "d" || cfg.importFiles.Nodes != "n.jsonl" {
			t.Errorf("%q: command %q, data dir %q, nodes %q", args, cfg.command, cfg.dataDir, cfg.importFiles.Nodes)
		}
	}
	if _, err := parseConfig([]string{"import", "repair"}); err == nil {
		t.Error("two commands were accepted")
	}
}

func TestScanConcurrencyDefaultsByBackend(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want int
	}{
		{nil, 1},
		{[]string{"--hbase-zk", "zk1:2181"}, loaders.DefaultConfig.ScanConcurrency},
		{[]string{"--scan-concurrency", "4"}, 4},
		{[]string{"--hbase-zk", "zk1:2181", "--scan-concurrency", "2"}, 2},
	} {
		cfg, err := parseConfig(tc.args)
		if err != nil {
			t.Fatalf("%q: %v", tc.args, err)
		}
		if got := cfg.scanConcurrency(); got != tc.want {
			t.Errorf("%q: scan concurrency %d, want %d", tc.args, got, tc.want)
		}
	}
	if _, err := parseConfig([]string{"--scan-concurrency", "-1"}); err == nil {
		t.Error("--scan-concurrency -1 was accepted")
	}
}
