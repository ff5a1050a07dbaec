package model

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	"routebench/modelspec/weights"
)

// Example shows the pipeline's use of the package: train one variant,
// read its weights back (model/gomlxeval and model/nativeeval evaluate them).
func Example() {
	cfg, err := shapeConfig("smoke", "random-qkv", 257)
	if err != nil {
		fmt.Println(err)
		return
	}
	cfg.Steps, cfg.Warmup = 4, 1 // keep the example quick
	dir, _ := os.MkdirTemp("", "routebench-example")
	defer os.RemoveAll(dir)
	data := newSynthData(cfg.Vocab) // any Data: the pipeline passes its token shards
	err = Train(context.Background(), cfg, data, filepath.Join(dir, "work"), filepath.Join(dir, "out"),
		func(Progress) {})
	if err != nil {
		fmt.Println(err)
		return
	}
	set, err := weights.ReadFile(filepath.Join(dir, "out", WeightsFile))
	if err != nil {
		fmt.Println(err)
		return
	}
	angles, err := set.Get("angles", cfg.Vocab, cfg.Heads, cfg.DModel/cfg.Heads/2)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(set.Arch.Variant, set.Arch.Rotation, set.Arch.ValueRot, len(angles))
	// Output: random-qkv accumulated true 4112
}
