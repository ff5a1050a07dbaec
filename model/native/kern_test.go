package native

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
)

// Tolerances: a float32 dot product of n terms has a rounding error bounded
// by about n*eps*sum|a_i b_i| (eps = 2^-24); blocked FMA sums do much better
// in practice. We allow tolDot * sum|a_i b_i| with tolDot = 1e-5 (~170 eps):
// large enough for n up to a few thousand, small enough to catch any wrong
// index (which gives errors of order sum|a_i b_i| itself).
const tolDot = 1e-5

// forEachKernelSet runs f under each kernel set the host runs (portable,
// and avx2 and avx512 where the CPU has them), as subtests named by the set.
func forEachKernelSet(t *testing.T, f func(t *testing.T)) {
	defer setKernels(setKernels(kset))
	for _, s := range runnableSets() {
		setKernels(s)
		t.Run(s.String(), f)
	}
}

func randSlice(r *rand.Rand, n int, scale float64) []float32 {
	x := make([]float32, n)
	for i := range x {
		x[i] = float32(r.NormFloat64() * scale)
	}
	return x
}

func TestQKBlock(t *testing.T) {
	forEachKernelSet(t, func(t *testing.T) {
		r := rand.New(rand.NewPCG(1, 2))
		for _, nq := range []int{1, 3, 4, 7, 8, 33} {
			for _, d := range []int{2, 16, 32, 64} {
				for _, bk := range []int{16, 48, 64, 128} {
					q, kt := randSlice(r, nq*d, 1), randSlice(r, d*bk, 1)
					s := make([]float32, nq*bk)
					qkBlock(s, q, kt, nq, d, bk)
					for i := 0; i < nq; i++ {
						for j := 0; j < bk; j++ {
							var want, mag float64
							for c := 0; c < d; c++ {
								p := float64(q[i*d+c]) * float64(kt[c*bk+j])
								want += p
								mag += math.Abs(p)
							}
							if math.Abs(float64(s[i*bk+j])-want) > tolDot*mag+1e-30 {
								t.Fatalf("nq=%d d=%d bk=%d: s[%d][%d] = %g, want %g", nq, d, bk, i, j, s[i*bk+j], want)
							}
						}
					}
				}
			}
		}
	})
}

func TestPVBlock(t *testing.T) {
	forEachKernelSet(t, func(t *testing.T) {
		r := rand.New(rand.NewPCG(3, 4))
		for _, nq := range []int{1, 5, 8, 17} {
			for _, d := range []int{2, 16, 32, 48, 64} {
				for _, nk := range []int{1, 15, 64} {
					bk := 64
					p, v, o := randSlice(r, nq*bk, 1), randSlice(r, bk*d, 1), randSlice(r, nq*d, 1)
					o0 := append([]float32(nil), o...)
					pvBlock(o, p, v, nq, d, bk, nk)
					for i := 0; i < nq; i++ {
						for c := 0; c < d; c++ {
							want, mag := float64(o0[i*d+c]), math.Abs(float64(o0[i*d+c]))
							for j := 0; j < nk; j++ {
								x := float64(p[i*bk+j]) * float64(v[j*d+c])
								want += x
								mag += math.Abs(x)
							}
							if math.Abs(float64(o[i*d+c])-want) > tolDot*mag {
								t.Fatalf("nq=%d d=%d nk=%d: o[%d][%d] = %g, want %g", nq, d, nk, i, c, o[i*d+c], want)
							}
						}
					}
				}
			}
		}
	})
}

// TestExpShift: the polynomial exp is within a few ulps (we allow 4e-7
// relative, ~7 eps) down to expLo; below it the result is at most exp(expLo)
// (the portable kernels give 0, the assembly one may give a
// denormal), and exactly 0 for -Inf (masked scores) and below -104.
func TestExpShift(t *testing.T) {
	forEachKernelSet(t, func(t *testing.T) {
		x := make([]float32, 0, 4096)
		for v := float32(-110); v <= 0; v += 0.0271 {
			x = append(x, v)
		}
		x = append(x, float32(math.Inf(-1)), 0, -1e-7, -86.9)
		for len(x)%16 != 0 {
			x = append(x, -3)
		}
		in := append([]float32(nil), x...)
		m := float32(0.5)
		sum := expShift(x, m)
		var want float64
		for i, v := range in {
			e := math.Exp(float64(v - m)) // the kernel sees the float32 difference
			arg := float64(v - m)
			switch {
			case arg < -104 && x[i] != 0:
				t.Fatalf("exp(%g) = %g, want exactly 0", arg, x[i])
			case arg < expLo:
				if x[i] < 0 || x[i] > 1.7e-38 { // exp(expLo) = 1.65e-38
					t.Fatalf("exp(%g) = %g, want 0 or a denormal", arg, x[i])
				}
				continue
			}
			want += e
			if math.Abs(float64(x[i])-e) > 4e-7*e {
				t.Fatalf("exp(%g) = %g, want %g", v-m, x[i], e)
			}
		}
		if math.Abs(float64(sum)-want) > 1e-5*want {
			t.Fatalf("sum = %g, want %g", sum, want)
		}
		if mx := maxOf(in); mx != 0 {
			t.Fatalf("maxOf = %g, want 0", mx)
		}
	})
}

func TestGemm(t *testing.T) {
	forEachKernelSet(t, func(t *testing.T) {
		r := rand.New(rand.NewPCG(5, 6))
		for _, sz := range [][3]int{{1, 1, 1}, {3, 5, 7}, {4, 64, 64}, {65, 33, 130}, {130, 128, 257}, {200, 512, 128}} {
			m, k, n := sz[0], sz[1], sz[2]
			for _, acc := range []bool{false, true} {
				t.Run(fmt.Sprintf("%dx%dx%d/acc=%v", m, k, n, acc), func(t *testing.T) {
					a, b := randSlice(r, m*k, 1), randSlice(r, k*n, 1)
					ldc := n + 3 // a leading dimension wider than n must be honoured
					c := randSlice(r, m*ldc, 1)
					c0 := append([]float32(nil), c...)
					gemmParallel(c, ldc, a, k, packB(b, k, n), m, acc, 2)
					for i := 0; i < m; i++ {
						for j := 0; j < ldc; j++ {
							got := float64(c[i*ldc+j])
							if j >= n {
								if got != float64(c0[i*ldc+j]) {
									t.Fatalf("c[%d][%d] beyond n changed", i, j)
								}
								continue
							}
							var want, mag float64
							if acc {
								want, mag = float64(c0[i*ldc+j]), math.Abs(float64(c0[i*ldc+j]))
							}
							for kk := 0; kk < k; kk++ {
								x := float64(a[i*k+kk]) * float64(b[kk*n+j])
								want += x
								mag += math.Abs(x)
							}
							if math.Abs(got-want) > tolDot*mag {
								t.Fatalf("c[%d][%d] = %g, want %g", i, j, got, want)
							}
						}
					}
				})
			}
		}
	})
}

// TestGelu: the vector GELU (u - u/(exp(2z)+1)) matches the tanh form in
// float64 within 1e-6 |u| (a few float32 ulps of the result's scale; the
// division and exp each add ~1 ulp), including the saturated tails and the
// scalar remainder (len not a multiple of 16).
func TestGelu(t *testing.T) {
	forEachKernelSet(t, func(t *testing.T) {
		var x []float32
		for u := float32(-12); u <= 12; u += 0.01 {
			x = append(x, u)
		}
		x = append(x, 0, 1e-30, -1e-30, 40, -40, 7)
		in := append([]float32(nil), x...)
		geluTanh(x)
		for i, u := range in {
			v := float64(u)
			want := 0.5 * v * (1 + math.Tanh(math.Sqrt(2/math.Pi)*(v+0.044715*v*v*v)))
			if math.Abs(float64(x[i])-want) > 1e-6*math.Abs(v)+1e-37 {
				t.Fatalf("gelu(%g) = %g, want %g", u, x[i], want)
			}
		}
	})
}
