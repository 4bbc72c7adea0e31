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
