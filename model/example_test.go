package model

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	"routebench/model/weights"
)

// Example shows the pipeline's use of the package: train one variant,
// read its weights back, run the gomlx forward on a window.
func Example() {
	cfg, err := ProfileConfig("smoke", "random-qkv", 257)
	if err != nil {
		fmt.Println(err)
		return
	}
	cfg.Steps, cfg.Warmup = 4, 1 // keep the example quick
	dir, _ := os.MkdirTemp("", "routebench-example")
	defer os.RemoveAll(dir)
	data := newSynthData(cfg.Vocab) // any Data: the pipeline passes its token shards
	err = Train(context.Background(), cfg, data, filepath.Join(dir, "work"), filepath.Join(dir, "out"),
		func(done, total int64, note string) {})
	if err != nil {
		fmt.Println(err)
		return
	}
	set, err := weights.ReadFile(filepath.Join(dir, "out", WeightsFile))
	if err != nil {
		fmt.Println(err)
		return
	}
	logits, err := Forward(set, []int32{72, 101, 108, 108, 111})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(set.Arch.Variant, set.Arch.Rotation, set.Arch.ValueRot, len(logits), len(logits[0]))
	// Output: random-qkv accumulated true 5 257
}
