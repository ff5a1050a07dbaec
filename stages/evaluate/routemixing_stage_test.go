package evaluate

import (
	"context"
	"math"
	"reflect"
	"slices"
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
			checkRepeatedControl(t, m, a, mx)
			got := *mx
			got.Repeated, got.Heads = nil, slices.Clone(mx.Heads)
			for u := range got.Heads {
				got.Heads[u].Repeated = 0
			}
			if want := ref.result(); !reflect.DeepEqual(&got, want) {
				t.Errorf("the evaluator's mixing window differs from passes over its first %d spans:\n got %+v\nwant %+v", routeWindows, mx.Lengths[3], want.Lengths[3])
			}
		})
	}
}

// checkRepeatedControl checks the repeated-byte control (routecontrol.go)
// of an evaluated model: 2N + 1 tokens of byte 0x20; for a token table
// (random-qk) every step is the table's row for 0x20, so each unit's c(n)
// is cos(n a) of its own angle a, and its n* is that curve's, the
// reference computed here from the angle the model gives the byte.
func checkRepeatedControl(t *testing.T, m *nativeeval.Model, a modelspec.Arch, mx *RouteMixing) {
	t.Helper()
	grid := mx.Lengths[len(mx.Lengths)-1].Grid
	N := grid[len(grid)-1]
	if mx.Repeated == nil || mx.Repeated.Token != repeatedByte || mx.Repeated.Tokens != 2*N+1 {
		t.Fatalf("repeated-byte control %+v, want token 0x20 x %d (2N + 1, N = %d)", mx.Repeated, 2*N+1, N)
	}
	if a.Rotation != modelspec.RotationAccumulated || a.Householder {
		return
	}
	one, err := m.LogProbs(context.Background(), []int32{repeatedByte}, nil, nativeeval.Options{RouteTrace: true})
	if err != nil {
		t.Fatal(err)
	}
	if !mx.SharedTable {
		return // a projected angle depends on the state, not on the byte alone
	}
	angles := one.Route[0].Angles // [1][H][P]: the byte's row of the table
	found := 0
	for u, hw := range mx.Heads {
		if hw.Layer > 0 {
			continue // the shared table: layer 0's units are every layer's
		}
		x := float64(angles[hw.Head*(len(angles)/a.Heads)+hw.Pair])
		c := make([]float64, len(grid))
		for g, n := range grid {
			c[g] = math.Cos(float64(n) * x)
		}
		want, ok := windowOf(c, grid)
		if !ok {
			want = 0
		}
		if hw.Repeated != want {
			t.Errorf("unit %d (layer %d head %d pair %d, angle %.4f): n* on the repeated text %d, want %d (cos(n a)'s)", u, hw.Layer, hw.Head, hw.Pair, x, hw.Repeated, want)
		}
		if hw.Repeated != hw.Window {
			found++
		}
	}
	if found == 0 {
		t.Errorf("every unit's n* on the repeated text equals the held-out text's: the control did not read its own text")
	}
}
