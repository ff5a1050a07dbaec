package nativeeval_test

import (
	"context"
	"fmt"

	"routebench/model/nativeeval"
	"routebench/modelspec"
	"routebench/modelspec/weights"
)

// A weights set with every tensor ARCHITECTURE.md names (here all zeros
// except unit norm gains, so every position predicts uniformly).
func tinySet() *weights.Set {
	a := modelspec.Arch{Variant: "random-qkv", Profile: "example", Vocab: 8, DModel: 8, Layers: 1, Heads: 2,
		DHidden: 16, Context: 4, NormEps: 1e-5, RopeBase: 10000, Rotation: "accumulated", ValueRot: true}
	t := func(name string, shape ...int) weights.Tensor {
		n := 1
		for _, s := range shape {
			n *= s
		}
		return weights.Tensor{Name: name, Shape: shape, Data: make([]float32, n)}
	}
	ones := func(name string, n int) weights.Tensor {
		x := t(name, n)
		for i := range x.Data {
			x.Data[i] = 1
		}
		return x
	}
	set, err := weights.NewSet(a, []weights.Tensor{
		t("embed", 8, 8), ones("normf", 8), t("unembed", 8, 8), t("angles", 8, 2, 2),
		ones("block000/norm1", 8), ones("block000/norm2", 8), t("block000/wq", 8, 8), t("block000/wk", 8, 8),
		t("block000/wv", 8, 8), t("block000/wo", 8, 8), t("block000/w1", 8, 16), t("block000/b1", 16),
		t("block000/w2", 16, 8), t("block000/b2", 8),
	})
	if err != nil {
		panic(err)
	}
	return set
}

func ExampleModel_LogProbs() {
	m, err := nativeeval.Load(tinySet())
	if err != nil {
		fmt.Println(err)
		return
	}
	tokens := []int32{1, 2, 3, 4, 5}
	res, err := m.LogProbs(context.Background(), tokens[:4], tokens[1:], nativeeval.Options{FarDistances: []int{2}})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Printf("log p(x_1 | x_0) = %.4f (uniform: log 1/8)\n", res.LogProbs[0])
	h := res.Heads[0]
	fmt.Printf("layer %d head %d: mass beyond distance %d over %d queries = %.3f\n",
		h.Layer, h.Head, h.Far[0].Distance, h.Far[0].N, h.Far[0].Mean)
	// Output:
	// log p(x_1 | x_0) = -2.0794 (uniform: log 1/8)
	// layer 0 head 0: mass beyond distance 2 over 1 queries = 0.250
}
