package main

import (
	"testing"

	"github.com/hbgraph/hbgraph/store/embedded"
)

func TestCacheFlags(t *testing.T) {
	cfg, err := parseConfig(nil)
	if err != nil {
		t.Fatal(err)
	}
	if cfg.blockCacheBytes != embedded.DefaultCacheBytes || cfg.resultCacheOption() != embedded.DefaultResultCacheBytes {
		t.Errorf("defaults: block %d, result %d", cfg.blockCacheBytes, cfg.resultCacheOption())
	}
	cfg, err = parseConfig([]string{"--result-cache-bytes", "0", "--block-cache-bytes", "1048576"})
	if err != nil {
		t.Fatal(err)
	}
	if cfg.resultCacheOption() >= 0 || cfg.blockCacheBytes != 1<<20 {
		t.Errorf("--result-cache-bytes 0 is %d for the engine (want none, negative); block %d", cfg.resultCacheOption(), cfg.blockCacheBytes)
	}
	for _, bad := range [][]string{{"--block-cache-bytes", "1000"}, {"--result-cache-bytes", "-1"}} {
		if _, err := parseConfig(bad); err == nil {
			t.Errorf("%v: no error", bad)
		}
	}
}

func TestBlockCacheDefaultsByCommand(t *testing.T) {
	for _, tc := range []struct {
		env  string // HBGRAPH_BLOCK_CACHE_BYTES, "" for unset
		args []string
		want int64
	}{
		{"", nil, embedded.DefaultCacheBytes},
		{"", []string{"repair"}, embedded.DefaultCacheBytes},
		{"", []string{"import"}, importBlockCacheBytes},
		{"", []string{"--block-cache-bytes", "268435456", "import"}, 256 << 20},
		{"", []string{"import", "--block-cache-bytes", "2097152"}, 2 << 20},
		{"4194304", []string{"import"}, 4 << 20},
		{"4194304", nil, 4 << 20},
	} {
		if tc.env != "" {
			t.Setenv("HBGRAPH_BLOCK_CACHE_BYTES", tc.env)
		}
		cfg, err := parseConfig(tc.args)
		if err != nil {
			t.Fatalf("%q: %v", tc.args, err)
		}
		if got := cfg.blockCacheFor(); got != tc.want {
			t.Errorf("HBGRAPH_BLOCK_CACHE_BYTES=%q %q: block cache %d, want %d", tc.env, tc.args, got, tc.want)
		}
	}
}
