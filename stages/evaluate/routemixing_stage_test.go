package evaluate

import (
	"context"
	"reflect"
	"testing"

	"routebench/model/nativeeval"
	"routebench/modelspec"
	"routebench/modelspec/weights/weightstest"
	"routebench/pipeline"
	"routebench/stages/tokenize/shards"
)

// TestRouteMixingInEvaluate: under DesignPrefixes the evaluator's result
// carries the mixing window of every rotation and PaTH variant (none for
// NoPE), on the first routeWindows long windows: the same numbers as an
// accumulator fed by passes of its own over those windows' spans.
func TestRouteMixingInEvaluate(t *testing.T) {
	ds := prefixDataset(t)
	const T = 16
	for _, v := range []string{"nope", "rope", "random-qk", "learned-proj-qkv", "path"} {
		t.Run(v, func(t *testing.T) {
			a := modelspec.Config{Variant: v, Profile: "test", Vocab: 257, DModel: 32, Layers: 2, Heads: 2, DHidden: 48, Context: T}.Arch()
			set := weightstest.RandomSet(t, a, 5)
			cfg := NewConfig(v, "test", T, []int{1, 2, 4, 8}, 4, 3)
			cfg.Design = DesignPrefixes
			rc := &pipeline.RunContext{Context: context.Background(), Logf: func(string, ...any) {}, Progress: func(int64, int64, string) {}}
			res, _, err := evaluate(rc, cfg, set, ds)
			if err != nil {
				t.Fatal(err)
			}
			if v == "nope" {
				if res.Mixing != nil {
					t.Fatalf("NoPE has a route mixing window: %+v", res.Mixing)
				}
				return
			}
			mx := res.Mixing
			if mx == nil || len(mx.Lengths) != 4 {
				t.Fatalf("mixing %+v, want one entry per length (4)", mx)
			}
			if v == "rope" {
				return // exact; TestRouteCorrRoPE
			}
			if mx.Windows != routeWindows {
				t.Errorf("%d windows, want %d", mx.Windows, routeWindows)
			}
			m, err := nativeeval.Load(set)
			if err != nil {
				t.Fatal(err)
			}
			held, _ := ds.Tokens(shards.SplitHeldOut)
			ref := newRouteAcc(cfg, a)
			Lmax := 8 * T
			for w, sp := range res.Spans[:routeWindows] {
				win := make([]int32, sp.Tokens)
				if err := held.Read(win, sp.Offset); err != nil {
					t.Fatal(err)
				}
				out, err := m.LogProbs(context.Background(), win[:Lmax], nil, nativeeval.Options{RouteTrace: true})
				if err != nil {
					t.Fatal(err)
				}
				if err := ref.add(w, out.Route); err != nil {
					t.Fatal(err)
				}
			}
			if want := ref.result(); !reflect.DeepEqual(mx, want) {
				t.Errorf("the evaluator's mixing window differs from passes over its first %d spans:\n got %+v\nwant %+v", routeWindows, mx.Lengths[3], want.Lengths[3])
			}
		})
	}
}
