//go:build noxla

package bench

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/gomlx/gomlx/backends/simplego"
	. "github.com/gomlx/gomlx/pkg/core/graph" //nolint:revive // graph code reads best unqualified
	"github.com/gomlx/gomlx/pkg/core/tensors"

	"routebench/internal/procstat"
)

// gomlxConfig avoids simplego v0.26.0's executor deadlock (see
// GOMLX-NOTES.md) and picks its faster DotGeneral kernel.
const gomlxConfig = "parallelism=-1,dotgeneral_large"

// BenchmarkAttentionGomlx is plain causal softmax attention, the same shape
// as BenchmarkAttention's nope variant, as a gomlx graph on simplego: q, k,
// v [H, L, d] and an additive causal mask [L, L] in, [H, L, d] out. GFLOP/s
// use the same causal count as the native kernel (the graph itself
// computes all L x L scores), so the ratio of the two is the speed-up.
func BenchmarkAttentionGomlx(b *testing.B) {
	backend, err := simplego.New(gomlxConfig)
	if err != nil {
		b.Fatal(err)
	}
	defer backend.Finalize()
	H, d := benchHeads, benchDHead
	for _, L := range benchLengths {
		b.Run(fmt.Sprintf("variant=nope/L=%d", L), func(b *testing.B) {
			r := rand.New(rand.NewPCG(uint64(L), 2))
			mask := make([]float32, L*L)
			for i := 0; i < L; i++ {
				for j := i + 1; j < L; j++ {
					mask[i*L+j] = float32(math.Inf(-1))
				}
			}
			in := []any{
				tensors.FromFlatDataAndDimensions(randFloats(r, H*L*d), H, L, d),
				tensors.FromFlatDataAndDimensions(randFloats(r, H*L*d), H, L, d),
				tensors.FromFlatDataAndDimensions(randFloats(r, H*L*d), H, L, d),
				tensors.FromFlatDataAndDimensions(mask, L, L),
			}
			exec, err := NewExec(backend, func(q, k, v, m *Node) *Node {
				s := DotGeneral(q, []int{2}, []int{0}, k, []int{2}, []int{0}) // [H, L, L]
				s = Add(MulScalar(s, 1/math.Sqrt(float64(d))), BroadcastToDims(InsertAxes(m, 0), H, L, L))
				return DotGeneral(Softmax(s, -1), []int{2}, []int{0}, v, []int{1}, []int{0}) // [H, L, d]
			})
			if err != nil {
				b.Fatal(err)
			}
			defer exec.Finalize()
			run := func() {
				out, err := exec.Exec(in...)
				if err != nil {
					b.Fatal(err)
				}
				for _, t := range out {
					t.FinalizeAll()
				}
			}
			run() // compile outside the timing
			b.ResetTimer()
			cpu0 := procstat.CPUSeconds()
			for b.Loop() {
				run()
			}
			reportAttention(b, 4*float64(L)*float64(L)/2*float64(d)*float64(H), L, cpu0)
		})
	}
}
