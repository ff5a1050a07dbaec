package planner

import (
	"bytes"
	"context"
	"os"
	"testing"
	"time"

	"routebench/artifacts"
	"routebench/model/native"
	"routebench/pipeline"
)

// TestKernelSetsSameArtifacts: a smoke-sized train + evaluate of rope,
// ALiBi and PaTH-FoX (the plain, ramp and offsets forms of the streaming
// attention, and the trainer's row passes) under each kernel set the host
// runs, each into its own store, gives the same weight and evaluation
// digests: the kernel sets' bit-identity (model/native's
// TestKernelSetsBitwise) carried through whole stages. One set's stages
// re-run under another would differ in their digests if any kernel's bits
// did. Full mode only (trains; the portable set takes the longest).
func TestKernelSetsSameArtifacts(t *testing.T) {
	needCorpus(t)
	sets := native.KernelSets()
	if len(sets) < 2 {
		t.Skipf("only %v runs here: nothing to compare", sets)
	}
	host := native.KernelSet()
	defer func() {
		if _, err := native.SetKernelSet(host); err != nil {
			t.Error(err)
		}
	}()
	p := testProfile()
	p.Variants = []string{"rope", "alibi", "path-fox"}
	full, err := Build(p)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, v := range p.Variants {
		names = append(names, "train/"+v, "evaluate/"+v)
	}
	plan, err := full.Closure(names...)
	if err != nil {
		t.Fatal(err)
	}
	digests := map[string]map[string]string{} // set -> stage -> digest
	for _, set := range sets {
		if _, err := native.SetKernelSet(set); err != nil {
			t.Fatal(err)
		}
		store := t.TempDir()
		s, err := artifacts.Open(store)
		if err != nil {
			t.Fatal(err)
		}
		start := time.Now()
		r := &pipeline.Runner{Store: s, Log: &bytes.Buffer{}}
		if _, err := r.Run(context.Background(), plan); err != nil {
			t.Fatalf("%s: %v", set, err)
		}
		lines, arts, err := r.Status(plan)
		if err != nil {
			t.Fatal(err)
		}
		digests[set] = map[string]string{}
		for _, l := range lines {
			st, _ := plan.Stage(l.Stage)
			if !l.Cached {
				t.Fatalf("%s: stage %s not cached after the run: %s", set, l.Stage, l.Reason)
			}
			digests[set][l.Stage] = pipeline.StableDigest(st, arts[l.Stage])
		}
		t.Logf("%s (%s): %d stages in %.1f s", set, native.KernelName(), len(lines), time.Since(start).Seconds())
		if os.Getenv("ROUTEBENCH_KERNELSETS_VERBOSE") != "" {
			for _, n := range names {
				t.Logf("  %s %s", n, digests[set][n])
			}
		}
	}
	ref := digests[sets[0]]
	compared := 0
	for _, set := range sets[1:] {
		for _, n := range names {
			if digests[set][n] == "" || ref[n] == "" {
				t.Fatalf("no digest for %s under %s or %s", n, set, sets[0])
			}
			if digests[set][n] != ref[n] {
				t.Errorf("%s: %s gives digest %s, %s gives %s", n, set, digests[set][n], sets[0], ref[n])
			}
			compared++
		}
	}
	t.Logf("%d stage digests compared across %v", compared, sets)
}
