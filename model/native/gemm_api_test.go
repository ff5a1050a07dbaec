package native

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

// TestGemmAPI checks Gemm against a float64 product for every operand
// layout (transposes, strides wider than the rows, accumulate) and every
// triangular structure, at odd sizes that exercise partial panels, the
// 32-wide path and the row tails, with both kernel sets.
func TestGemmAPI(t *testing.T) {
	forEachKernelSet(t, func(t *testing.T) {
		r := rand.New(rand.NewPCG(7, 8))
		for _, sz := range [][3]int{{1, 1, 1}, {5, 3, 7}, {64, 32, 64}, {67, 67, 32}, {130, 37, 130}, {100, 129, 257}, {130, 130, 130}, {200, 200, 200}, {70, 1100, 150}} {
			m, k, n := sz[0], sz[1], sz[2]
			for _, tri := range triCombos() {
				if tri&LowerC != 0 && m != n || tri&(LowerA|UpperA) != 0 && m != k || tri&(LowerB|UpperB) != 0 && k != n {
					continue
				}
				for _, ta := range []bool{false, true} {
					for _, tb := range []bool{false, true} {
						for _, acc := range []bool{false, true} {
							name := fmt.Sprintf("%dx%dx%d/tri%d/ta=%v/tb=%v/acc=%v", m, k, n, tri, ta, tb, acc)
							checkGemm(t, r, name, m, k, n, tri, ta, tb, acc)
						}
					}
				}
			}
		}
	})
}

// triCombos is every structure a product can declare: LowerC or not, times
// none/LowerA/UpperA, times none/LowerB/UpperB.
func triCombos() []Tri {
	var out []Tri
	for _, c := range []Tri{Dense, LowerC} {
		for _, a := range []Tri{Dense, LowerA, UpperA} {
			for _, b := range []Tri{Dense, LowerB, UpperB} {
				out = append(out, c|a|b)
			}
		}
	}
	return out
}

func checkGemm(t *testing.T, r *rand.Rand, name string, m, k, n int, tri Tri, ta, tb, acc bool) {
	t.Helper()
	// op(A)[i][kk] and op(B)[kk][j] in float64, zero where tri says so.
	opA := make([]float64, m*k)
	for i := range m {
		for kk := range k {
			if tri&LowerA != 0 && kk > i || tri&UpperA != 0 && kk < i {
				continue
			}
			opA[i*k+kk] = r.NormFloat64()
		}
	}
	opB := make([]float64, k*n)
	for kk := range k {
		for j := range n {
			if tri&LowerB != 0 && kk < j || tri&UpperB != 0 && kk > j {
				continue
			}
			opB[kk*n+j] = r.NormFloat64()
		}
	}
	// Stored with a leading dimension 3 wider than the rows.
	store := func(x []float64, rows, cols int, trans bool) ([]float32, int) {
		if trans {
			rows, cols = cols, rows
		}
		ld := cols + 3
		s := make([]float32, rows*ld)
		for i := range rows {
			for j := range cols {
				if trans {
					s[i*ld+j] = float32(x[j*rows+i])
				} else {
					s[i*ld+j] = float32(x[i*cols+j])
				}
			}
		}
		return s, ld
	}
	a, lda := store(opA, m, k, ta)
	b, ldb := store(opB, k, n, tb)
	ldc := n + 5
	c := randSlice(r, m*ldc, 1)
	c0 := slices.Clone(c)
	Gemm{C: c, A: a, B: b, M: m, K: k, N: n, Ldc: ldc, Lda: lda, Ldb: ldb, TA: ta, TB: tb, Acc: acc, Tri: tri, Workers: 3}.Run()
	for i := range m {
		for j := range ldc {
			got := float64(c[i*ldc+j])
			if j >= n {
				if got != float64(c0[i*ldc+j]) {
					t.Fatalf("%s: c[%d][%d] beyond n changed", name, i, j)
				}
				continue
			}
			if tri&LowerC != 0 && j > i {
				continue
			}
			var want, mag float64
			if acc {
				want, mag = float64(c0[i*ldc+j]), math.Abs(float64(c0[i*ldc+j]))
			}
			for kk := range k {
				x := float64(float32(opA[i*k+kk])) * float64(float32(opB[kk*n+j]))
				want += x
				mag += math.Abs(x)
			}
			if math.Abs(got-want) > tolDot*mag+1e-30 {
				t.Fatalf("%s: c[%d][%d] = %g, want %g", name, i, j, got, want)
			}
		}
	}
}

// TestMatMulWorkerIndependent: the product is bitwise the same for 1, 2, 3
// and 8 workers (the tiles, not the workers, fix every reduction).
func TestMatMulWorkerIndependent(t *testing.T) {
	r := rand.New(rand.NewPCG(9, 10))
	for _, sz := range [][3]int{{130, 2048, 96}, {2048, 128, 257}, {300, 77, 300}} {
		m, k, n := sz[0], sz[1], sz[2]
		for _, ta := range []bool{false, true} {
			a, b := randSlice(r, m*k, 1), randSlice(r, k*n, 1)
			var first []float32
			for _, w := range []int{1, 2, 3, 8} {
				c := make([]float32, m*n)
				MatMul(c, a, b, m, k, n, ta, false, false, w)
				if first == nil {
					first = c
				} else if !slices.Equal(c, first) {
					t.Fatalf("%dx%dx%d ta=%v: %d workers differ from 1", m, k, n, ta, w)
				}
			}
		}
	}
}

// TestTranspose: both kernel sets (the AVX 8 x 8 blocks and the portable
// loop), full blocks and ragged edges, dense and strided destinations
// (a packed panel's 64-float rows).
func TestTranspose(t *testing.T) {
	forEachKernelSet(t, func(t *testing.T) {
		r := rand.New(rand.NewPCG(11, 12))
		for _, sz := range [][3]int{{1, 1, 1}, {7, 9, 7}, {8, 8, 8}, {16, 64, 16}, {64, 24, 70}, {65, 130, 65}, {300, 17, 300}, {40, 32, 64}} {
			rows, cols, ldd := sz[0], sz[1], sz[2]
			x := randSlice(r, rows*cols, 1)
			for _, w := range []int{1, 3} {
				dst := make([]float32, cols*ldd)
				transposeInto(dst, ldd, x, cols, rows, cols, w)
				for i := range rows {
					for j := range cols {
						if dst[j*ldd+i] != x[i*cols+j] {
							t.Fatalf("%dx%d (ldd %d) workers=%d: [%d][%d] wrong", rows, cols, ldd, w, i, j)
						}
					}
				}
			}
		}
	})
}

// TestExpShiftAPI: any length (the vector part and the scalar tail), each
// value within 4e-7 relative of float64 exp, the sum within 1e-5.
func TestExpShiftAPI(t *testing.T) {
	forEachKernelSet(t, func(t *testing.T) {
		r := rand.New(rand.NewPCG(13, 14))
		for _, n := range []int{1, 15, 16, 17, 257, 1000} {
			x := randSlice(r, n, 4)
			in := slices.Clone(x)
			m := float32(1.5)
			sum := ExpShift(x, m)
			var want float64
			for i, v := range in {
				e := math.Exp(float64(v - m))
				want += e
				if math.Abs(float64(x[i])-e) > 4e-7*e {
					t.Fatalf("n=%d: exp(%g) = %g, want %g", n, v-m, x[i], e)
				}
			}
			if math.Abs(float64(sum)-want) > 1e-5*want {
				t.Fatalf("n=%d: sum = %g, want %g", n, sum, want)
			}
		}
	})
}

// TestGELUTanh: tanh within 3e-7 absolute and the GELU within 3e-7 |u| of
// float64, over the active range, the saturated tails and odd lengths.
func TestGELUTanh(t *testing.T) {
	forEachKernelSet(t, func(t *testing.T) {
		var u []float32
		for x := float32(-12); x <= 12; x += 0.0137 {
			u = append(u, x)
		}
		u = append(u, 0, 1e-30, -1e-30, 40, -40, 7)
		th, g := make([]float32, len(u)), make([]float32, len(u))
		// Half of u goes in as u - bias with the bias added by GELUTanh.
		bias, ub := make([]float32, len(u)), slices.Clone(u)
		for i := range bias {
			if i%2 == 0 {
				bias[i] = float32(i%7) - 3
				ub[i] = u[i] - bias[i]
				u[i] = ub[i] + bias[i] // the sum GELUTanh computes
			}
		}
		GELUTanh(ub, bias, th, g)
		for i, x := range u {
			if ub[i] != x {
				t.Fatalf("u[%d] + bias = %g, want %g", i, ub[i], x)
			}
			v := float64(x)
			wt := math.Tanh(math.Sqrt(2/math.Pi) * (v + 0.044715*v*v*v))
			if math.Abs(float64(th[i])-wt) > 3e-7 {
				t.Fatalf("tanh at u=%g: %g, want %g", x, th[i], wt)
			}
			if wg := 0.5 * v * (1 + wt); math.Abs(float64(g[i])-wg) > 3e-7*math.Abs(v)+1e-37 {
				t.Fatalf("gelu(%g) = %g, want %g", x, g[i], wg)
			}
		}
	})
}

func BenchmarkTranspose(b *testing.B) {
	x := make([]float32, 2048*128)
	dst := make([]float32, len(x))
	b.SetBytes(int64(4 * len(x)))
	for b.Loop() {
		transposeInto(dst, 2048, x, 128, 2048, 128, 1)
	}
}

// TestGemmTriSkipsWork: a structure flag must change what is computed on
// operands that do not have the structure (a flag that skipped nothing
// would pass TestGemmAPI and save nothing, a wrong skip would fail it).
func TestGemmTriSkipsWork(t *testing.T) {
	forEachKernelSet(t, func(t *testing.T) {
		r := rand.New(rand.NewPCG(11, 12))
		const n = 200
		a, b := randSlice(r, n*n, 1), randSlice(r, n*n, 1)
		dense := make([]float32, n*n)
		MatMul(dense, a, b, n, n, n, false, false, false, 2)
		for _, tri := range []Tri{LowerA, UpperA, LowerB, UpperB, LowerA | LowerB} {
			c := make([]float32, n*n)
			Gemm{C: c, A: a, B: b, M: n, K: n, N: n, Tri: tri, Workers: 2}.Run()
			if slices.Equal(c, dense) {
				t.Fatalf("tri %d: the product on dense operands equals the dense product: nothing was skipped", tri)
			}
		}
	})
}

// TestGemmKChunksBitwise: a long transposed reduction, which Gemm runs in
// chunks of gemmKChunk, gives bit for bit the product of one kernel call
// per tile over the whole k (the reference here), with and without
// accumulating into C and with the triangular limits on A's reduction.
func TestGemmKChunksBitwise(t *testing.T) {
	if !avx512Available() {
		t.Skip("the chunks apply to the assembly kernels only")
	}
	r := rand.New(rand.NewPCG(11, 12))
	for _, sz := range [][3]int{{96, 4096, 192}, {100, 1100, 128}, {1100, 1100, 64}} {
		m, k, n := sz[0], sz[1], sz[2]
		for _, tri := range []Tri{Dense, LowerA, UpperA} {
			if tri != Dense && m != k {
				continue
			}
			for _, acc := range []bool{false, true} {
				a, b, c0 := randSlice(r, k*m, 1), randSlice(r, k*n, 1), randSlice(r, m*n, 1)
				got, want := slices.Clone(c0), slices.Clone(c0)
				Gemm{C: got, A: a, B: b, M: m, K: k, N: n, TA: true, Acc: acc, Tri: tri}.Run()
				// One call per micro-kernel's rows (the triangular limits
				// apply per row group: the operands here are dense, so a
				// group's limits show in the result).
				for i0 := 0; i0 < m; i0 += gemmRowBlock {
					i1 := min(m, i0+gemmRowBlock)
					for s, rr := 0, 0; s < i1-i0; s += rr {
						rr = rowTile(i1-i0, panelWidth, s)
						k0, k1 := 0, k
						if tri == LowerA {
							k1 = min(k, i0+s+rr)
						}
						if tri == UpperA {
							k0 = i0 + s
						}
						for j0 := 0; j0 < n; j0 += panelWidth {
							gemmPanelT(want[(i0+s)*n+j0:], n, a[k0*m+i0+s:], m, b[k0*n+j0:], n, rr, k1-k0, panelWidth, acc)
						}
					}
				}
				if !slices.Equal(got, want) {
					t.Fatalf("%dx%dx%d tri=%d acc=%v: the chunked reduction differs from one call over k", m, k, n, tri, acc)
				}
			}
		}
	}
}
