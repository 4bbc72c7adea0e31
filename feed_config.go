package main

import (
	"errors"
	"fmt"
	"strings"

	"github.com/hbgraph/hbgraph/store"
)

// feedFlags are the --feed-* flags: which relationship types keep home
// feeds, the fan-out bound and the backfill of a new follow.
type feedFlags struct {
	types     string
	fanoutMax int64
	backfill  int
}

func (f feedFlags) typeList() []string {
	var out []string
	for t := range strings.SplitSeq(f.types, ",") {
		if t = strings.TrimSpace(t); t != "" {
			out = append(out, t)
		}
	}
	return out
}

func (f feedFlags) validate() error {
	if f.fanoutMax < 1 || f.backfill < 0 {
		return errors.New("--feed-fanout-max must be positive and --feed-backfill at least 0")
	}
	if err := f.options().Validate(); err != nil {
		return fmt.Errorf("--feed-types: each type must be 1-%d bytes of valid UTF-8", store.MaxTypeBytes)
	}
	return nil
}

// options are the store's FeedOptions.
func (f feedFlags) options() store.FeedOptions {
	o := store.FeedOptions{Types: f.typeList(), FanoutMax: f.fanoutMax, Backfill: f.backfill}
	if o.Backfill == 0 {
		o.Backfill = -1 // the store's zero is its default
	}
	return o
}
