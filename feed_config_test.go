package main

import (
	"slices"
	"testing"
)

func TestFeedFlags(t *testing.T) {
	f := feedFlags{types: " follows, ,likes", fanoutMax: 5, backfill: 0}
	o := f.options()
	if !slices.Equal(o.Types, []string{"follows", "likes"}) || o.FanoutMax != 5 || o.Backfill != -1 {
		t.Errorf("options: %+v", o)
	}
	if err := f.validate(); err != nil {
		t.Error(err)
	}
	if (feedFlags{types: ""}).options().Types != nil {
		t.Error("an empty --feed-types keeps a type")
	}
	for _, bad := range []feedFlags{{types: "follows", fanoutMax: 0}, {types: "follows", fanoutMax: 1, backfill: -1},
		{types: "f\xff", fanoutMax: 1}} {
		if bad.validate() == nil {
			t.Errorf("%+v: no error", bad)
		}
	}
}
